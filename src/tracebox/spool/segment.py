"""A segment file open for appending, held by exactly one writer (see ``format``)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import socket
import time
from pathlib import Path

from tracebox.spool.format import MAGIC, SEGMENT_SUFFIX, TMP_SUFFIX, fsync_directory


class SegmentNamer:
    """Names segments ``{time_ns:020d}-{hostname}-{pid}-{seq:06d}.seg``.

    The time is kept strictly increasing for this writer, so its own segments sort in
    order even if the wall clock steps back.
    """

    def __init__(self) -> None:
        self._host = re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname())[:64] or "host"
        self._pid = os.getpid()
        self._seq = 0
        self._last_ns = 0

    def next_name(self) -> str:
        self._last_ns = max(time.time_ns(), self._last_ns + 1)
        self._seq += 1
        return f"{self._last_ns:020d}-{self._host}-{self._pid}-{self._seq:06d}{SEGMENT_SUFFIX}"


class SegmentFile:
    """An append-only segment, exclusively ``flock``-ed for as long as it is open.

    Closing it (rotation, ``close``, or the process dying) releases the lock, which is
    what tells the reader the segment is finished.
    """

    def __init__(self, fd: int, path: Path, size: int) -> None:
        self._fd = fd
        self.path = path
        self.size = size
        self._created = time.monotonic()

    def age(self) -> float:
        """Seconds since this writer created the segment."""
        return time.monotonic() - self._created

    @classmethod
    def create(cls, directory: Path, name: str) -> SegmentFile:
        """Create, lock and durably name a new segment.

        The file is created and locked under a ``.tmp`` name the reader ignores, then
        renamed: a reader must never see an unlocked new segment, or it would take it
        for a finished, empty one and delete it. The directory fsync makes the name
        durable before any record in the file is acknowledged.
        """
        tmp = directory / (name + TMP_SUFFIX)
        final = directory / name
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _write_all(fd, MAGIC)
            os.rename(tmp, final)
            fsync_directory(directory)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise
        return cls(fd, final, len(MAGIC))

    def append(self, blob: bytes) -> None:
        """Write ``blob`` at the end and fsync; durable when this returns.

        On failure the file is cut back to its previous end (best effort), so the
        reader does not deliver records whose append was refused.
        """
        try:
            _write_all(self._fd, blob)
            os.fsync(self._fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self.size)
            raise
        self.size += len(blob)

    def close(self) -> None:
        os.close(self._fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
