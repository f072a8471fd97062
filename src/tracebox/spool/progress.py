"""What the digest has consumed, published for the web workers, and the backlog from it.

The database's cursors are the truth of "digested", but web workers must not ask the
database on the hot path (nor depend on it during an outage). So after each commit the
digest publishes its positions in ``<spool>/progress.json`` (a small file, replaced
atomically, not fsynced: it is derived data, rebuilt from the cursors after a crash).
Web workers combine it with the segment files they see to get the backlog: the spool
cap counts undigested bytes, not file sizes, and ``/-/health`` reports the lag.

A missing or stale file only overstates the backlog (positions never go backwards),
so it can make ingestion refuse early, never admit past the cap.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from tracebox.spool.format import FILE_HEADER_BYTES, SEGMENT_SUFFIX

PROGRESS_FILE = "progress.json"
_NEW_SUFFIX = ".new"


@dataclass(frozen=True)
class Progress:
    positions: Mapping[str, int] = field(default_factory=dict)  # committed, per segment
    # Wall-clock time at which a read started that then consumed the segment to its end:
    # whatever it holds beyond its position was written after that.
    drained_at: Mapping[str, float] = field(default_factory=dict)
    published_at: float = 0.0


@dataclass(frozen=True)
class Backlog:
    bytes: int  # undigested bytes in segment files
    oldest: float | None  # wall time the oldest undigested byte was written, at the latest
    segments: int  # segment files on disk
    disk_bytes: int  # their total size

    def lag_seconds(self, now: float) -> float:
        return 0.0 if self.oldest is None else max(0.0, now - self.oldest)


def publish(directory: Path, positions: Mapping[str, int], drained_at: Mapping[str, float]) -> None:
    """Replace the progress file (atomically: readers see the old or the new one)."""
    path = directory / PROGRESS_FILE
    tmp = path.with_name(PROGRESS_FILE + _NEW_SUFFIX)
    data = {"positions": positions, "drained_at": drained_at, "published_at": time.time()}
    tmp.write_bytes(orjson.dumps(data))
    os.replace(tmp, path)


def read(directory: Path) -> Progress:
    """The last published progress; empty (nothing known digested) if there is none."""
    try:
        data = orjson.loads((directory / PROGRESS_FILE).read_bytes())
        return Progress(data["positions"], data["drained_at"], data["published_at"])
    except (OSError, ValueError, KeyError, TypeError):
        return Progress()


def backlog(directory: Path, progress: Progress | None = None) -> Backlog:
    """Undigested bytes in ``directory`` per ``progress`` (read from the file if None)."""
    progress = progress if progress is not None else read(directory)
    pending = total = segments = 0
    oldest: float | None = None
    with contextlib.suppress(FileNotFoundError), os.scandir(directory) as entries:
        for entry in entries:
            if not entry.name.endswith(SEGMENT_SUFFIX):
                continue
            try:
                size = entry.stat().st_size
            except FileNotFoundError:  # released by the digest meanwhile
                continue
            segments += 1
            total += size
            done = max(progress.positions.get(entry.name, 0), FILE_HEADER_BYTES)
            if size > done:
                pending += size - done
                since = progress.drained_at.get(entry.name) or created_at(entry.name)
                oldest = since if oldest is None else min(oldest, since)
    return Backlog(pending, oldest, segments, total)


def created_at(segment_name: str) -> float:
    """A segment's creation time, from its name (``{time_ns:020d}-...``); 0 if unreadable."""
    head = segment_name.split("-", 1)[0]
    return int(head) / 1e9 if head.isdigit() else 0.0
