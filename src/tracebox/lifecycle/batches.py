"""Write transactions sized to hold the database's write lock about ``target_ms``.

Each batch is one short write transaction; its size adapts to how long the last ones
held the lock, and after each one the writer pauses twice as long as it held the lock,
so the digest (waiting in SQLite's busy handler) always gets its turn.
"""

from __future__ import annotations

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
# and checkpoint per event removed, bench/cleanup_bench.py) are spread out.
PAUSE_FACTOR = 2.0
CHECKPOINT_EVERY = 20  # write transactions between two passive WAL checkpoints


@dataclass
class LockStats:
    """How long cleanup's write transactions held the lock."""

    transactions: int = 0
    longest_ms: float = 0.0
    total_ms: float = 0.0
    checkpoint_ms: float = 0.0  # passive WAL checkpoints: no write lock, for the record

    def add(self, held_ms: float) -> None:
        self.transactions += 1
        self.total_ms += held_ms
        self.longest_ms = max(self.longest_ms, held_ms)


class Batches:
    def __init__(
        self,
        db: Database,
        *,
        target_ms: float,
        initial: int = 100,
        maximum: int = 2000,
        on_lock: Callable[[float], None] | None = None,
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        self.db = db
        self.target_ms = target_ms
        self.size = initial
        self.maximum = maximum
        self.stats = LockStats()
        self._on_lock = on_lock
        self._sleep = sleep

    def write(self, work: Callable[[Connection], T], *, rows: int) -> T:
        """Run ``work`` in one write transaction covering ``rows`` rows; adapt the size."""
        with self.db.write() as conn:
            started = time.perf_counter()  # the lock is held from here (BEGIN IMMEDIATE)
            sqlite_space.without_autocheckpoint(conn)
            result = work(conn)
        self._done((time.perf_counter() - started) * 1000, rows)
        return result

    def timed(self, work: Callable[[], T], *, rows: int) -> T:
        """Like ``write`` for ``work`` that runs its own single write transaction."""
        started = time.perf_counter()
        result = work()
        self._done((time.perf_counter() - started) * 1000, rows)
        return result

    def _done(self, held_ms: float, rows: int) -> None:
        self.stats.add(held_ms)
        if self._on_lock:
            self._on_lock(held_ms / 1000)
        self._adapt(held_ms, rows)
        if self.stats.transactions % CHECKPOINT_EVERY == 0:
            started = time.perf_counter()
            sqlite_space.checkpoint(self.db.engine)
            self.stats.checkpoint_ms += (time.perf_counter() - started) * 1000
        self._sleep(max(MIN_PAUSE_S, PAUSE_FACTOR * held_ms / 1000))

    def _adapt(self, held_ms: float, rows: int) -> None:
        if held_ms > self.target_ms:
            self.size = max(1, int(self.size * self.target_ms / held_ms * 0.8))
        elif rows >= self.size and held_ms < self.target_ms / 2:
            self.size = min(self.maximum, self.size * 2)
