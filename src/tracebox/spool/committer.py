"""Group commit: one thread writes and fsyncs everything queued since the last fsync.

Appenders queue framed blobs with a waiter; the committer thread takes the whole queue,
writes it with one ``write`` and one ``fsync``, then wakes every waiter of the batch
(asyncio waiters through one ``call_soon_threadsafe`` per event loop). While one fsync
runs, the next batch accumulates, so concurrent appends share fsyncs.

The thread also finishes (closes) its segment once it is ``segment_bytes`` big or
``segment_max_age_s`` old, even while idle, so the digest can delete consumed records:
a live segment is never deleted, and a small spool cap must not wait for a big segment
to fill up (issue 9). The next segment is created when the next records come.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tracebox.logs import LoggedCondition, first_line
from tracebox.spool.format import FILE_HEADER_BYTES
from tracebox.spool.segment import SegmentFile, SegmentNamer

log = logging.getLogger("tracebox.spool")

# A commit outcome: None when durable, else the error that prevented it.
Outcome = BaseException | None


@dataclass(frozen=True)
class Pending:
    blob: bytes
    waiter: asyncio.Future[Outcome] | concurrent.futures.Future[Outcome]
    loop: asyncio.AbstractEventLoop | None  # the waiter's loop, None for a sync waiter


class Committer:
    """Owns the writer's current segment; while running, only its thread touches it."""

    def __init__(
        self,
        directory: Path,
        *,
        segment_bytes: int,
        segment_max_age_s: float,
        commit_interval_s: float,
        reminder_seconds: float = 60.0,
    ) -> None:
        self._directory = directory
        self._segment_bytes = segment_bytes
        self._segment_max_age_s = segment_max_age_s
        self._interval_s = commit_interval_s
        self._write_failing = LoggedCondition(
            log, "spool write failed, answering 503", reminder_seconds=reminder_seconds
        )
        self._namer = SegmentNamer()
        self._segment: SegmentFile | None = None
        self._queue: list[Pending] = []
        self._cond = threading.Condition()
        self._stopping = False
        # Appends per commit last time: while fewer are queued, wait (at most the commit
        # interval) for the rest of the producers, so a steady load is not split into a
        # big fsync followed by a tiny one.
        self._target = 1
        self._thread = threading.Thread(target=self._run, name="spool-committer", daemon=True)

    def start(self) -> None:
        self._segment = self._new_segment()
        self._thread.start()

    def submit(self, item: Pending) -> None:
        with self._cond:
            if self._stopping:
                raise RuntimeError("spool writer is closed")
            self._queue.append(item)
            # Wake the thread only when it has something to do, not on every append.
            if len(self._queue) == 1 or len(self._queue) >= self._target:
                self._cond.notify()

    def stop(self) -> None:
        """Commit what is queued, stop the thread and close (finish) the segment."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join()
        self._drop_segment()

    def _run(self) -> None:
        while (batch := self._take()) is not None:
            if not batch:  # idle past the segment's age: finish it
                self._drop_segment()
                continue
            try:
                self._commit(b"".join(item.blob for item in batch))
                outcome: Outcome = None
                self._write_failing.cleared()
            except Exception as exc:  # an unacknowledged batch; recover on the next one
                self._write_failing.occurred(first_line(exc))
                self._drop_segment()
                outcome = exc
            _settle(batch, outcome)

    def _take(self) -> list[Pending] | None:
        """The next batch; ``[]`` when the current segment got old while idle; None to stop."""
        with self._cond:
            while not self._queue and not self._stopping:
                timeout = self._time_left()
                if timeout is not None and timeout <= 0:
                    return []
                self._cond.wait(timeout)
            if not self._queue:
                return None
            deadline = time.monotonic() + self._interval_s
            while len(self._queue) < self._target and not self._stopping:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            batch, self._queue = self._queue, []
            self._target = len(batch)
        return batch

    def _commit(self, blob: bytes) -> None:
        segment = self._segment
        if segment is not None and self._is_full(segment, len(blob)):
            self._drop_segment()
            segment = None
        if segment is None:
            segment = self._segment = self._new_segment()
        segment.append(blob)

    def _is_full(self, segment: SegmentFile, incoming: int) -> bool:
        # A batch bigger than a whole segment still goes into one (fresh) segment.
        has_records = segment.size > FILE_HEADER_BYTES
        too_big = segment.size + incoming > self._segment_bytes
        return has_records and (too_big or segment.age() >= self._segment_max_age_s)

    def _time_left(self) -> float | None:
        """Seconds until the current segment is old enough to finish; None: no deadline
        (no segment, or an empty one: finishing it would only make another)."""
        segment = self._segment
        if segment is None or segment.size <= FILE_HEADER_BYTES:
            return None
        return self._segment_max_age_s - segment.age()

    def _new_segment(self) -> SegmentFile:
        return SegmentFile.create(self._directory, self._namer.next_name())

    def _drop_segment(self) -> None:
        # After a failed write the segment may end in a torn record; nothing is ever
        # appended after it, so closing (finishing) it keeps every acknowledged record.
        if self._segment is not None:
            with contextlib.suppress(OSError):
                self._segment.close()
            self._segment = None


def _settle(batch: list[Pending], outcome: Outcome) -> None:
    by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Future[Outcome]]] = {}
    for item in batch:
        if item.loop is None:
            _resolve(item.waiter, outcome)
        else:
            assert isinstance(item.waiter, asyncio.Future)
            by_loop.setdefault(item.loop, []).append(item.waiter)
    for loop, futures in by_loop.items():
        with contextlib.suppress(RuntimeError):  # the loop was closed meanwhile
            loop.call_soon_threadsafe(_resolve_all, futures, outcome)


def _resolve_all(futures: list[asyncio.Future[Outcome]], outcome: Outcome) -> None:
    for future in futures:
        _resolve(future, outcome)


def _resolve(
    waiter: asyncio.Future[Outcome] | concurrent.futures.Future[Outcome], outcome: Outcome
) -> None:
    # A cancelled waiter (the request went away) is simply not told.
    if not waiter.done():
        waiter.set_result(outcome)
