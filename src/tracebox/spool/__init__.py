"""Durable hand-off between ingest (many writer processes) and digest (one reader).

A directory of append-only segment files: each web worker process appends to its own
segments with a ``SpoolWriter`` (acknowledged only after fsync, group commit), and the
digest reads every segment with a ``SpoolReader`` from positions it stores with its
data. The file format and what makes a segment finished are described in ``format``;
what one record holds, in ``record``.
"""

from tracebox.spool.reader import Batch, SpoolReader
from tracebox.spool.record import RecordError, RecordKind, SpoolRecord
from tracebox.spool.space import SpoolFull, spool_bytes
from tracebox.spool.writer import SpoolWriter

__all__ = [
    "Batch",
    "RecordError",
    "RecordKind",
    "SpoolFull",
    "SpoolReader",
    "SpoolRecord",
    "SpoolWriter",
    "spool_bytes",
]
