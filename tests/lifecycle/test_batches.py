"""Cleanup's write transactions follow the lock time budget: a batch sized from the cost
per row measured on the last ones, shrunk at once after a slow one, grown a little at a
time, and a pause after each. Deterministic: the clock is the test's, and each batch
"costs" a chosen time per row on it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Connection

from tracebox.lifecycle.batches import (
    GROWTH,
    MAX_PACE_S,
    MAX_YIELD_S,
    MIN_PAUSE_S,
    PAUSE_FACTOR,
    YIELD_STEP_S,
    Batches,
)
from tracebox.store import Database

TARGET_MS = 25.0


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    """A database to hold transactions (the work is the test clock's, not the tables')."""
    database = Database(f"sqlite:///{tmp_path / 'batches.sqlite3'}")
    yield database
    database.dispose()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Run:
    """Transactions whose rows cost ``ms_per_row`` each on the test's clock."""

    def __init__(self, db: Database) -> None:
        self.clock = Clock()
        self.pauses: list[float] = []
        self.batches = Batches(
            db,
            target_ms=TARGET_MS,
            initial=100,
            maximum=10_000,
            sleep=self.pauses.append,
            clock=self.clock,
        )
        self.sizes: list[int] = []
        self.held_ms: list[float] = []

    def transaction(self, ms_per_row: float, rows: int | None = None) -> None:
        n = self.batches.size if rows is None else rows

        def work(conn: Connection) -> None:
            conn.exec_driver_sql("SELECT 1")
            self.clock.now += n * ms_per_row / 1000

        self.sizes.append(self.batches.size)
        self.held_ms.append(n * ms_per_row)
        self.batches.write(work, rows=n)


def test_a_batch_over_the_budget_shrinks_the_next_one_to_fit(db: Database) -> None:
    run = Run(db)
    run.transaction(0.5)  # 100 rows: 50 ms, twice the target

    assert 49 <= run.batches.size <= 50  # 25 ms / 0.5 ms per row
    assert run.pauses[-1] == pytest.approx(PAUSE_FACTOR * 0.05)  # after holding it 50 ms
    run.transaction(0.5)
    assert run.held_ms[-1] <= TARGET_MS + 0.5
    assert run.batches.stats.transactions == 2
    assert run.batches.stats.over_target == 1
    assert round(run.batches.stats.longest_ms) == 50


def test_cheaper_rows_grow_the_batch_gradually_up_to_the_budget(db: Database) -> None:
    run = Run(db)
    for _ in range(40):
        run.transaction(0.05)  # the budget holds 500 rows

    for before, after in zip(run.sizes, run.sizes[1:], strict=False):
        assert before <= after <= max(before + 1, int(before * GROWTH))
    assert all(ms <= TARGET_MS + 0.01 for ms in run.held_ms)
    assert 450 <= run.batches.size <= 500


def test_rows_turning_costly_cost_one_slow_transaction_only(db: Database) -> None:
    run = Run(db)
    for _ in range(40):
        run.transaction(0.05)
    run.transaction(0.5)  # ten times the cost: this one is over the budget
    for _ in range(10):
        run.transaction(0.5)

    over = [ms for ms in run.held_ms if ms > TARGET_MS + 0.5]
    assert len(over) == 1
    assert run.pauses[-11] == pytest.approx(PAUSE_FACTOR * over[0] / 1000)
    assert 49 <= run.batches.size <= 50


def test_a_short_list_says_little_about_the_batch_size(db: Database) -> None:
    run = Run(db)
    run.transaction(20.0, rows=1)  # one row: mostly the transaction's own cost

    assert run.batches.size == 100
    run.transaction(40.0, rows=1)  # over the budget even so: the machine is slow just now
    assert run.batches.size == 62  # 100 x 25 / 40


class Backlog:
    """The digest is behind for the first ``rounds`` times it is asked."""

    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        self.asked = 0

    def __call__(self) -> bool:
        self.asked += 1
        return self.asked <= self.rounds


def test_a_digest_behind_makes_the_next_transaction_wait_until_it_caught_up(
    db: Database,
) -> None:
    run = Run(db)
    behind = Backlog(rounds=3)
    run.batches._behind = behind
    run.transaction(0.05)

    assert run.pauses[:3] == [YIELD_STEP_S] * 3  # then the transaction, then its pause
    assert len(run.pauses) == 4
    assert run.batches.stats.yields == 1
    assert run.batches.stats.yielded_ms == pytest.approx(300)
    run.transaction(0.05)  # caught up: no wait
    assert run.batches.stats.yields == 1 and len(run.pauses) == 5


def test_a_digest_that_stays_behind_slows_cleanup_down_but_never_stops_it(
    db: Database,
) -> None:
    run = Run(db)
    run.batches._behind = Backlog(rounds=10**9)
    for _ in range(3):
        run.transaction(0.05)

    assert run.batches.stats.transactions == 3  # every transaction ran ...
    assert run.batches.stats.yields == 3  # ... each after the longest wait
    assert run.batches.stats.yielded_ms == pytest.approx(3 * MAX_YIELD_S * 1000)


def test_a_stop_ends_the_wait_at_once(db: Database) -> None:
    """SIGTERM must not wait for the digest to catch up: the transaction in hand goes."""
    run = Run(db)
    stop = threading.Event()
    run.batches._behind = Backlog(rounds=10**9)
    run.batches._stop = stop
    run.batches._sleep = lambda _s: stop.set()  # SIGTERM during the first wait
    run.transaction(0.05)

    assert run.batches.stats.transactions == 1
    assert run.batches.stats.yielded_ms == pytest.approx(YIELD_STEP_S * 1000)


MIB = 1024 * 1024


def test_the_pause_keeps_the_databases_writes_within_the_write_budget(db: Database) -> None:
    """Each transaction's pages go to disk twice, into the log and at the checkpoint after
    it into the database: the pause lasts as long as the budget needs for both."""
    pauses: list[float] = []
    batches = Batches(db, target_ms=TARGET_MS, write_budget=MIB, sleep=pauses.append, clock=Clock())
    batches.write(lambda conn: conn.exec_driver_sql("CREATE TABLE blobs (b BLOB)"), rows=0)
    written = batches.stats.written_bytes
    batches.write(
        lambda conn: conn.exec_driver_sql("INSERT INTO blobs VALUES (zeroblob(2097152))"), rows=1
    )

    blob = batches.stats.written_bytes - written
    assert 4 * MIB <= blob <= 5 * MIB  # 2 MiB in the log, 2 MiB copied
    assert pauses[-1] == pytest.approx(blob / MIB)  # the test's clock did not move
    assert batches.stats.paced_ms == pytest.approx(1000 * (sum(pauses) - MIN_PAUSE_S * 2), abs=1)
    batches.write(lambda conn: conn.exec_driver_sql("SELECT count(*) FROM blobs").scalar(), rows=0)
    assert batches.stats.written_bytes == written + blob  # nothing written: nothing counted
    assert pauses[-1] == MIN_PAUSE_S


def test_writes_far_over_the_budget_slow_cleanup_down_but_never_stop_it(db: Database) -> None:
    pauses: list[float] = []
    batches = Batches(db, target_ms=TARGET_MS, write_budget=1, sleep=pauses.append, clock=Clock())
    batches.write(lambda conn: conn.exec_driver_sql("CREATE TABLE blobs (b BLOB)"), rows=0)

    assert pauses == [MAX_PACE_S]


def test_without_a_write_budget_the_pause_follows_the_lock_time_only(db: Database) -> None:
    run = Run(db)
    run.batches.write(lambda conn: conn.exec_driver_sql("CREATE TABLE blobs (b BLOB)"), rows=0)
    run.transaction(0.5)

    assert run.batches.stats.written_bytes > 0  # counted all the same
    assert run.pauses == [MIN_PAUSE_S, pytest.approx(PAUSE_FACTOR * 0.05)]
    assert run.batches.stats.paced_ms == 0


def test_what_others_write_between_transactions_is_not_counted(db: Database) -> None:
    """The digest's commits between two of cleanup's are its own: they are checkpointed
    before cleanup's next transaction, and its pause follows that transaction's only."""
    pauses: list[float] = []
    batches = Batches(db, target_ms=TARGET_MS, write_budget=MIB, sleep=pauses.append, clock=Clock())
    batches.write(lambda conn: conn.exec_driver_sql("CREATE TABLE blobs (b BLOB)"), rows=0)
    written = batches.stats.written_bytes
    with db.write() as conn:  # the digest, say
        conn.exec_driver_sql("INSERT INTO blobs VALUES (zeroblob(2097152))")
    batches.write(lambda conn: conn.exec_driver_sql("SELECT count(*) FROM blobs").scalar(), rows=0)

    assert batches.stats.written_bytes == written
    assert pauses[-1] == MIN_PAUSE_S
