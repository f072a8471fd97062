"""Write transactions sized to hold the database's write lock about ``target_ms``.

Each batch is one short write transaction; its size is the target divided by the cost
per row measured on the last transactions, and after each one the writer pauses eight
times as long as it held the lock, so the digest (waiting in SQLite's busy handler) always
gets its turn. A slow transaction shrinks the next batch at once; a fast one lets it
grow by at most ``GROWTH``, so one cheap stretch (rows on pages already in memory, free
pages at the end of the file) cannot size a batch that a costly stretch then runs with.

The disk is shared with ingestion, whose every acknowledgement waits for an fsync of the
spool. Removing an event rewrites 30-80 KiB of pages (table and both its indexes, in
the log and again in the database at the checkpoint); paced by the lock alone, cleanup
wrote about 62 MiB/s and an fsync probe's p99 went from 0.4 to 6-8 ms. With
``write_budget`` (bytes per second) the pause also lasts until the transaction's writes
fit the budget (``MAX_PACE_S`` at most). They are counted by the passive checkpoints
around it: the one before copies what others (the digest) wrote, the one after copies
the transaction's own pages and says how many (docs/performance.md).

Ingestion comes first: while ``behind()`` says the digest is behind (its spool backlog),
the writer waits before its next transaction, up to ``MAX_YIELD_S`` at a time, so a
cleanup under heavy load slows down instead of filling the spool; it never stops, so a
disk budget is still enforced under a load the digest cannot keep up with.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy import Connection

from tracebox.store import Database, sqlite_space

T = TypeVar("T")

MIN_PAUSE_S = 0.005
# After each transaction the writer pauses this many times as long as it held the lock:
# the digest gets its turn, and the disk writes of a large cleanup (about 20 KiB of log
# and checkpoint per event removed, bench/cleanup_bench.py) are spread out. On
# 1,000,000 events under 1,000 events/s of ingestion the p99 with cleanup was 21.4 ms
# at 2, 17.3-17.4 ms at 4 and 12.7 ms at 8 (twice), against 7.4-18.2 ms in the runs
# without cleanup; at 8 the cleanup of 300,000 events took 232-235 s (docs/performance.md).
PAUSE_FACTOR = 8.0
GROWTH = 1.25  # a batch grows by at most this factor from one transaction to the next
# The cost per row is remembered as the larger of the last one and this share of the
# remembered one (plus the rest of the last): a slow transaction counts at once, fast
# ones wear its memory down over a few transactions.
COST_MEMORY = 0.7
HISTOGRAM_MS = 1000  # lock times are counted per millisecond up to this, above in one bucket
YIELD_STEP_S = 0.1  # while the digest is behind, ask again after this long ...
MAX_YIELD_S = 5.0  # ... and go ahead with one transaction after this long at most
MAX_PACE_S = 5.0  # the longest pause for the write budget: slower, never stopped


@dataclass
class LockStats:
    """How long cleanup's write transactions held the lock (p50/p99 from a histogram of
    whole milliseconds), and the passive WAL checkpoints run between them."""

    transactions: int = 0
    longest_ms: float = 0.0
    total_ms: float = 0.0
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    over_target: int = 0  # transactions longer than the target
    # A passive WAL checkpoint after each transaction (no write lock, for the record): each
    # one's log (~100-500 pages of 16 KiB) goes into the database at once, as the digest's
    # commits do (store.engine.SQLITE_WAL_AUTOCHECKPOINT_PAGES). Every 20 transactions
    # made 30-100 MiB flushed at once, and ingestion's fsyncs waited behind them.
    checkpoints: int = 0
    checkpoint_ms: float = 0.0
    written_bytes: int = 0  # about: log pages and their copies in the database
    paced_ms: float = 0.0  # pauses made longer than the lock's to keep to the write budget
    yields: int = 0  # transactions that first waited for the digest to catch up
    yielded_ms: float = 0.0  # how long they waited in all

    def __post_init__(self) -> None:
        self._histogram = [0] * (HISTOGRAM_MS + 1)

    def add(self, held_ms: float, target_ms: float = float("inf")) -> None:
        self.transactions += 1
        self.total_ms += held_ms
        self.longest_ms = max(self.longest_ms, held_ms)
        self.over_target += held_ms > target_ms
        self._histogram[min(HISTOGRAM_MS, int(held_ms))] += 1
        self.p50_ms = self._quantile(0.5)
        self.p99_ms = self._quantile(0.99)

    def _quantile(self, q: float) -> float:
        """The upper edge of the millisecond bucket holding the ``q`` quantile."""
        rank, seen = q * self.transactions, 0
        for ms, n in enumerate(self._histogram):
            seen += n
            if n and seen >= rank:
                return float(min(ms + 1, self.longest_ms) if ms < HISTOGRAM_MS else self.longest_ms)
        return self.longest_ms


class Batches:
    def __init__(
        self,
        db: Database,
        *,
        target_ms: float,
        initial: int = 100,
        maximum: int = 2000,
        on_lock: Callable[[float], None] | None = None,
        behind: Callable[[], bool] | None = None,
        write_budget: float = 0.0,
        stop: threading.Event | None = None,
        sleep: Callable[[float], object] | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.db = db
        self.target_ms = target_ms
        self.size = initial
        self.maximum = maximum
        self.stats = LockStats()
        self._cost_ms: float | None = None  # per row
        self._on_lock = on_lock
        self._behind = behind
        self._write_budget = write_budget  # bytes per second; 0: none
        self._checkpoint = sqlite_space.Checkpoints(db.engine)
        self._stop = stop or threading.Event()
        self._sleep = sleep or self._stop.wait  # a stop ends a pause at once
        self._clock = clock

    def write(self, work: Callable[[Connection], T], *, rows: int) -> T:
        """Run ``work`` in one write transaction covering ``rows`` rows; adapt the size.
        Python's cyclic garbage collector waits until the lock is released: a collection
        inside the transaction held the lock for nothing (4% of it, py-spy)."""
        self._wait_turn()
        self._checkpointed()  # what others wrote since ours: copied, not counted
        collecting = gc.isenabled()
        gc.disable()
        try:
            with self.db.write() as conn:
                started = self._clock()  # the lock is held from here (BEGIN IMMEDIATE)
                sqlite_space.without_autocheckpoint(conn)
                result = work(conn)
            held_ms = (self._clock() - started) * 1000
        finally:
            if collecting:
                gc.enable()
        self._done(started, held_ms, rows)
        return result

    def _wait_turn(self) -> None:
        """Wait while the digest is behind, at most ``MAX_YIELD_S``; not once ``stop``
        is set (SIGTERM: serve's stop must not wait for the digest to catch up)."""
        if self._behind is None:
            return
        steps = 0
        limit = round(MAX_YIELD_S / YIELD_STEP_S)
        while steps < limit and not self._stop.is_set() and self._behind():
            self._sleep(YIELD_STEP_S)
            steps += 1
        if steps:
            self.stats.yields += 1
            self.stats.yielded_ms += steps * YIELD_STEP_S * 1000

    def _done(self, started: float, held_ms: float, rows: int) -> None:
        self.stats.add(held_ms, self.target_ms)
        if self._on_lock:
            self._on_lock(held_ms / 1000)
        self._adapt(held_ms, rows)
        written = self._checkpointed()  # ours (others were waiting for the lock)
        self.stats.written_bytes += written
        pause = max(MIN_PAUSE_S, PAUSE_FACTOR * held_ms / 1000)
        if self._write_budget > 0:  # the whole cycle, from BEGIN to the next, fits the budget
            paced = min(MAX_PACE_S, written / self._write_budget - (self._clock() - started))
            if paced > pause:
                self.stats.paced_ms += (paced - pause) * 1000
                pause = paced
        self._sleep(pause)

    def _checkpointed(self) -> int:
        """A passive checkpoint; the bytes written since the last one."""
        started = self._clock()
        written = self._checkpoint()
        self.stats.checkpoints += 1
        self.stats.checkpoint_ms += (self._clock() - started) * 1000
        return written

    def _adapt(self, held_ms: float, rows: int) -> None:
        """Size the next batch to ``target_ms`` at the remembered cost per row, learnt
        from full batches only: the end of a list (or a single row) costs mostly the
        transaction itself, not its rows. One of those over the target says the
        database or the machine is slow just now: the batch shrinks in proportion."""
        if rows <= 0:
            return
        if rows < self.size:
            if held_ms > self.target_ms:
                self.size = max(1, int(self.size * self.target_ms / held_ms))
            return
        cost = held_ms / rows
        if self._cost_ms is not None and cost < self._cost_ms:
            cost = COST_MEMORY * self._cost_ms + (1 - COST_MEMORY) * cost
        self._cost_ms = cost
        fitting = int(self.target_ms / max(cost, 1e-6))
        ceiling = max(self.size + 1, int(self.size * GROWTH))
        self.size = max(1, min(self.maximum, ceiling, fitting))
