"""What ingestion may still write: the spool's cap on undigested bytes and the free disk.

Both are checked before anything is written, so a request refused with 503 and
``Retry-After`` leaves no partial record behind, and both recover by themselves: the
digest consumes records (the backlog falls) and deletes finished segments (the disk
frees up).
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from tracebox import errors
from tracebox.logs import LoggedCondition
from tracebox.spool import progress
from tracebox.spool.format import SEGMENT_SUFFIX, TMP_SUFFIX

# How long a measurement is trusted. A directory scan per request would be wasted work;
# 100 ms of staleness only lets other workers overshoot the cap by what they write in
# that time. (A module constant so tests can set it to 0.)
CAP_REFRESH_S = 0.1

log = logging.getLogger("tracebox.spool")


class SpoolFull(errors.Unavailable):
    """The spool holds more undigested bytes than its cap; ingestion answers 503."""


class DiskFull(errors.Unavailable):
    """Writing would leave less free disk than the reserve; ingestion answers 503."""


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


def free_bytes(directory: Path) -> int:
    """Bytes an unprivileged writer can still use on ``directory``'s filesystem."""
    stat = os.statvfs(directory)
    return stat.f_bavail * stat.f_frsize


class SpaceAccount:
    """Admits writes while undigested bytes stay within ``max_undigested_bytes`` and the
    disk keeps ``min_free_bytes`` free.

    Undigested bytes are the segment files beyond the positions the digest published
    (``spool.progress``): digested bytes still in a live segment do not count, so any
    cap works, however small against the segment size. When nothing is undigested, any
    write is admitted, so a cap below one maximal event slows ingestion but never
    wedges it. Measured at most every ``CAP_REFRESH_S``, plus what this writer admitted
    since; one ``scandir``, a ``stat`` per segment and a small file read.
    """

    def __init__(
        self,
        directory: Path,
        *,
        max_undigested_bytes: int,
        min_free_bytes: int,
        retry_after: int,
        reminder_seconds: float = 60.0,
    ) -> None:
        self._directory = directory
        self._max_undigested_bytes = max_undigested_bytes
        self._min_free_bytes = min_free_bytes
        self._retry_after = retry_after
        self._undigested = 0
        self._free = 0
        self._measured_at = float("-inf")
        self._spool_full = LoggedCondition(
            log, "spool full, answering 503", reminder_seconds=reminder_seconds
        )
        self._disk_full = LoggedCondition(
            log, "disk nearly full, answering 503", reminder_seconds=reminder_seconds
        )

    def admit(self, nbytes: int) -> None:
        """Count ``nbytes`` about to be written, or raise ``SpoolFull`` or ``DiskFull``."""
        self._measure()
        if self._undigested and self._undigested + nbytes > self._max_undigested_bytes:
            message = (
                f"spool is full ({self._undigested} undigested bytes; "
                f"the cap is {self._max_undigested_bytes})"
            )
            self._spool_full.occurred(message)
            raise SpoolFull(message, retry_after=self._retry_after)
        if self._free - nbytes < self._min_free_bytes:
            message = (
                f"disk nearly full ({self._free} bytes free; {self._min_free_bytes} are kept free)"
            )
            self._disk_full.occurred(message)
            raise DiskFull(message, retry_after=self._retry_after)
        self._spool_full.cleared()
        self._disk_full.cleared()
        self._undigested += nbytes
        self._free -= nbytes

    def _measure(self) -> None:
        now = time.monotonic()
        if now - self._measured_at < CAP_REFRESH_S:
            return
        self._undigested = progress.backlog(self._directory).bytes
        self._free = free_bytes(self._directory)
        self._measured_at = now
