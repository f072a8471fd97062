"""SpoolReader: reads all writers' segments past the digest's positions.

The reader keeps no state of its own: what it returns is a function of the segment
files and the ``positions`` the caller passes in, so the digest can store positions in
the same database transaction as the data it derived from them (exactly-once).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from tracebox.spool.format import (
    FILE_HEADER_BYTES,
    SEGMENT_SUFFIX,
    TMP_SUFFIX,
    Scan,
    Stop,
    has_magic,
    is_finished,
    scan,
)

log = logging.getLogger(__name__)

# A .tmp file is a segment being created (renamed within microseconds) or the leftover
# of a writer killed in that instant; only leftovers get this old.
STALE_TMP_S = 60.0


@dataclass(frozen=True)
class Batch:
    records: list[bytes]
    # Segment name -> offset just past the last record returned: the input positions
    # merged with the progress made. Pass it to the next ``read``.
    positions: dict[str, int]
    # Segments this read consumed to their end (as far as they were written when it
    # started): what they hold beyond that was written after the read started.
    drained: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Segment:
    name: str
    path: Path
    size: int


class SpoolReader:
    """Reads complete records, oldest segments first, and deletes consumed segments.

    - A torn record at the tail of a live segment (its writer is still writing it) is
      neither returned nor skipped: a later ``read`` returns it once complete.
    - In a finished segment a torn tail (its writer died mid-write: never acknowledged)
      or a corrupt record is skipped to the end of the segment; corruption is logged.
    """

    def __init__(self, directory: Path) -> None:
        self._directory = directory

    @property
    def directory(self) -> Path:
        return self._directory

    def read(self, positions: Mapping[str, int], max_records: int) -> Batch:
        """Up to ``max_records`` complete records after ``positions`` (missing = start)."""
        records: list[bytes] = []
        merged = dict(positions)
        drained: list[str] = []
        for segment in self._segments():
            wanted = max_records - len(records)
            if wanted <= 0:
                break
            start = _start(positions, segment.name)
            if start >= segment.size:
                drained.append(segment.name)
                continue
            result = self._read_segment(segment, start, wanted)
            records.extend(result.records)
            if result.end > start:
                merged[segment.name] = result.end
            if result.stop in (Stop.END, Stop.TORN):  # a torn tail is still being written
                drained.append(segment.name)
        return Batch(records, merged, drained)

    def release(self, positions: Mapping[str, int]) -> list[str]:
        """Delete segments that are finished and fully consumed; return their names."""
        released = []
        for segment in self._segments():
            if self._consumed(segment, _start(positions, segment.name)):
                segment.path.unlink(missing_ok=True)
                released.append(segment.name)
        self._remove_stale_tmp_files()
        return released

    def segment_names(self) -> list[str]:
        """Names of the segment files present, oldest first."""
        return [segment.name for segment in self._segments()]

    def pending_bytes(self, positions: Mapping[str, int]) -> int:
        """Bytes of segment files not yet consumed per ``positions`` (the digest's lag)."""
        return sum(
            max(0, segment.size - _start(positions, segment.name)) for segment in self._segments()
        )

    def _read_segment(self, segment: _Segment, start: int, wanted: int) -> Scan:
        with _open(segment.path) as file:
            if file is None:
                return Scan([], start, Stop.END)
            # Decide "finished" before reading: once unlocked, the file no longer
            # changes, so what we read next is all there will ever be.
            finished = is_finished(file.fileno())
            size = os.fstat(file.fileno()).st_size
            if start == FILE_HEADER_BYTES and not has_magic(file):
                return _skip_bad_file(segment, start, size, finished)
            result = scan(file, start, size, wanted)
        if finished and result.stop in (Stop.TORN, Stop.CORRUPT):
            return _skip_tail(segment, result, size)
        return result

    def _consumed(self, segment: _Segment, start: int) -> bool:
        with _open(segment.path) as file:
            if file is None or not is_finished(file.fileno()):
                return False
            size = os.fstat(file.fileno()).st_size
            if start >= size:
                return True
            if start == FILE_HEADER_BYTES and not has_magic(file):
                return True
            # Only a torn or corrupt tail left: read() skips it, so it counts as consumed.
            return not scan(file, start, size, 1).records

    def _segments(self) -> list[_Segment]:
        """Segment files, oldest first (names start with their creation time)."""
        segments = []
        try:
            with os.scandir(self._directory) as entries:
                for entry in entries:
                    if entry.name.endswith(SEGMENT_SUFFIX):
                        segment = _stat_segment(entry)
                        if segment is not None:
                            segments.append(segment)
        except FileNotFoundError:
            return []
        return sorted(segments, key=lambda segment: segment.name)

    def _remove_stale_tmp_files(self) -> None:
        cutoff = time.time() - STALE_TMP_S
        try:
            with os.scandir(self._directory) as entries:
                stale = [
                    Path(e.path)
                    for e in entries
                    if e.name.endswith(TMP_SUFFIX) and e.stat().st_mtime < cutoff
                ]
        except FileNotFoundError:
            return
        for path in stale:
            with _open(path) as file:
                if file is not None and is_finished(file.fileno()):
                    path.unlink(missing_ok=True)


def _start(positions: Mapping[str, int], name: str) -> int:
    return max(positions.get(name, 0), FILE_HEADER_BYTES)


def _stat_segment(entry: os.DirEntry[str]) -> _Segment | None:
    try:
        return _Segment(entry.name, Path(entry.path), entry.stat().st_size)
    except FileNotFoundError:
        return None


@contextmanager
def _open(path: Path) -> Iterator[BinaryIO | None]:
    """Open a segment for reading; None if it was deleted meanwhile."""
    try:
        file = open(path, "rb")  # noqa: SIM115 (closed below; None needs a branch)
    except FileNotFoundError:
        yield None
        return
    with file:
        yield file


def _skip_tail(segment: _Segment, result: Scan, size: int) -> Scan:
    if result.stop is Stop.CORRUPT:
        log.warning(
            "spool segment %s: corrupt record at offset %d; skipping %d bytes to its end",
            segment.name,
            result.end,
            size - result.end,
        )
    else:
        log.info(
            "spool segment %s: ignoring a torn, unacknowledged record at offset %d",
            segment.name,
            result.end,
        )
    return Scan(result.records, size, Stop.END)


def _skip_bad_file(segment: _Segment, start: int, size: int, finished: bool) -> Scan:
    if not finished:
        return Scan([], start, Stop.TORN)
    log.warning("spool segment %s: not a spool segment (bad header); skipping it", segment.name)
    return Scan([], size, Stop.END)
