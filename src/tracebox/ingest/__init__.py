"""The ingestion hot path: SDK requests in, durable spool records out."""
