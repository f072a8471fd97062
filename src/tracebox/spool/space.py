"""How much disk the spool uses, and the cap that turns ingestion away when it is full."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tracebox import errors
from tracebox.spool.format import SEGMENT_SUFFIX, TMP_SUFFIX

# How long a measured total is trusted. A directory scan per request would be wasted
# work; 100 ms of staleness only lets other workers overshoot the cap by what they
# write in that time. (A module constant so tests can set it to 0.)
CAP_REFRESH_S = 0.1


class SpoolFull(errors.Unavailable):
    """The spool holds more than its size cap; ingestion answers 503 with Retry-After."""


def spool_bytes(directory: Path) -> int:
    """Total size of the segment files in ``directory`` (0 if it does not exist)."""
    total = 0
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.name.endswith((SEGMENT_SUFFIX, TMP_SUFFIX)):
                    total += _size(entry)
    except FileNotFoundError:
        return 0
    return total


def _size(entry: os.DirEntry[str]) -> int:
    try:
        return entry.stat().st_size
    except FileNotFoundError:  # released by the reader meanwhile
        return 0


class SpaceAccount:
    """Admits writes while the spool's total size stays within ``max_total_bytes``.

    The total is the directory's size, measured at most every ``CAP_REFRESH_S``, plus
    what this writer admitted since. A measurement is one ``scandir`` and a ``stat`` per
    segment (a few dozen at most), cheap enough for the event loop.
    """

    def __init__(self, directory: Path, *, max_total_bytes: int, retry_after: int) -> None:
        self._directory = directory
        self._max_total_bytes = max_total_bytes
        self._retry_after = retry_after
        self._total = 0
        self._measured_at = float("-inf")

    def admit(self, nbytes: int) -> None:
        """Count ``nbytes`` about to be written, or raise ``SpoolFull``."""
        now = time.monotonic()
        if now - self._measured_at >= CAP_REFRESH_S:
            self._total = spool_bytes(self._directory)
            self._measured_at = now
        if self._total + nbytes > self._max_total_bytes:
            raise SpoolFull(
                f"spool is full ({self._total} of {self._max_total_bytes} bytes used)",
                retry_after=self._retry_after,
            )
        self._total += nbytes
