"""Drains the spool into the store, one transaction per batch."""
