"""The Sentry ingestion protocol as pure functions: no I/O, no logging, no globals.

``dsn`` and ``auth`` read credentials, ``decoding`` undoes content encodings under a size
cap, ``envelope`` frames envelopes, ``event`` and ``session`` turn any SDK payload shape
into the one canonical shape the rest of Tracebox reads (docs/design.md).
"""
