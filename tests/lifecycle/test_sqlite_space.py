"""SQLite gives freed space back: new files use incremental auto-vacuum and 16 KiB pages,
older files are converted once by ``migrate``, and cleanup shrinks the file."""

from __future__ import annotations

import random
import sqlite3
import time
from pathlib import Path

from alembic import command

from tests.lifecycle.helpers import DAY, event, event_ids, project, store
from tracebox.config import Settings
from tracebox.lifecycle.cleanup import CleanupLoop
from tracebox.store import Database, usage
from tracebox.store.engine import SQLITE_WAL_AUTOCHECKPOINT_PAGES, alembic_config
from tracebox.store.payloads import PayloadEncoder
from tracebox.store.sqlite_space import (
    PAGE_SIZE,
    Checkpoints,
    new_file_pragmas,
    without_autocheckpoint,
)


def pragmas(path: Path) -> tuple[int, int]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA auto_vacuum").fetchone()[0], conn.execute(
            "PRAGMA page_size"
        ).fetchone()[0]
    finally:
        conn.close()


def checkpointed_size(db: Database, path: Path) -> int:
    """The file's size with the write-ahead log folded in."""
    db.dispose()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path.stat().st_size


def test_a_new_database_file_uses_incremental_auto_vacuum(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite3"
    db = Database(f"sqlite:///{path}")
    db.migrate()
    db.dispose()
    assert pragmas(path) == (2, PAGE_SIZE)


def test_migrate_converts_an_older_file_and_counts_what_it_stores(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    old = sqlite3.connect(path, isolation_level=None)  # as round one made them
    old.execute("PRAGMA page_size=4096")
    old.execute("PRAGMA journal_mode=WAL")
    old.execute("CREATE TABLE scratch (x)")
    old.close()
    url = f"sqlite:///{path}"
    command.upgrade(alembic_config(url), "0001")
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("INSERT INTO projects VALUES (1, 'acme/web', 'web', '', 'enabled', 0)")
    old.execute(
        "INSERT INTO errors VALUES (1, 1, 'h', '1', '[]', 't', '', '', '', 'python', 'error',"
        " 'unresolved', 0, 0, 0, NULL, NULL, 2, 0, NULL)"
    )
    stored = [
        PayloadEncoder().encode({"event_id": f"{i:032x}", "message": "x" * 50 * i}) for i in (1, 9)
    ]
    for i, payload in enumerate(stored):
        old.execute(
            "INSERT INTO events VALUES (?, 1, 1, ?, 0, 0, 'error', NULL, NULL, NULL, ?)",
            (i + 1, f"{i:032x}", payload),
        )
    old.execute("INSERT INTO error_users VALUES (1, 'id:7')")
    old.execute("INSERT INTO error_hourly VALUES (1, 500000, 2)")
    old.close()
    assert pragmas(path) == (0, 4096)

    db = Database(url)
    db.migrate()

    assert pragmas(path) == (2, PAGE_SIZE)
    with db.read() as conn:
        assert usage.stored(conn, 1)["events"] == usage.Stored("events", 2, sum(map(len, stored)))
        assert conn.exec_driver_sql("SELECT * FROM error_users").all() == [(1, "id:7")]
        assert conn.exec_driver_sql("SELECT * FROM error_hourly").all() == [(1, 500000, 2)]
        for table in ("error_users", "error_hourly", "error_tags"):  # stored once, by key
            sql = "SELECT sql FROM sqlite_master WHERE name = ?"
            assert "WITHOUT ROWID" in conn.exec_driver_sql(sql, (table,)).scalar_one()
    db.dispose()


def test_cleanup_gives_the_freed_pages_back_to_the_file_system(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    db = Database(settings.resolved_database_url())
    db.migrate()
    p = project(db, "acme/web")
    rng = random.Random(5)
    for age in (200, 1):  # half the events expired, written first (the oldest pages)
        batch = [event(f"e{i}", extra={"blob": rng.randbytes(4000).hex()}) for i in range(150)]
        store(db, p, *batch, at=time.time() - age * DAY)
    path = settings.data_dir / "tracebox.sqlite3"
    before = checkpointed_size(db, path)

    report = CleanupLoop(db, settings).run_once()

    assert report.removed["age"] == 150 and len(event_ids(db)) == 150
    after = checkpointed_size(db, path)
    assert report.freed_file_bytes > 0
    assert before - after >= 0.8 * report.removed_bytes  # the expired events: their pages


def test_opening_a_connection_never_waits_for_the_write_lock(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'busy.sqlite3'}")
    db.migrate()
    with db.write():  # a writer holds the lock; a new connection that wanted it would fail
        conn = sqlite3.connect(tmp_path / "busy.sqlite3", timeout=0)
        new_file_pragmas(conn.cursor())
        conn.execute("PRAGMA journal_mode=WAL")
        assert conn.execute("SELECT count(*) FROM projects").fetchone() == (0,)
        conn.close()
    db.dispose()


def test_checkpoints_are_off_for_one_cleanup_transaction_only(tmp_path: Path) -> None:
    """Cleanup turns the automatic checkpoint off for its own transactions; the pool's
    next user of that connection (the digest) checkpoints every 100 pages again."""
    db = Database(f"sqlite:///{tmp_path / 'c.sqlite3'}")
    db.migrate()

    def setting() -> int:
        with db.write() as conn:
            return int(conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar_one())

    try:
        assert setting() == SQLITE_WAL_AUTOCHECKPOINT_PAGES
        with db.write() as conn:
            without_autocheckpoint(conn)
            assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar_one() == 0
        assert setting() == SQLITE_WAL_AUTOCHECKPOINT_PAGES  # the same pooled connection
    finally:
        db.dispose()


def test_checkpoints_count_each_write_once_even_while_a_reader_holds_the_log(
    tmp_path: Path,
) -> None:
    """The bytes the pacing of cleanup sees: the pages each write put in the log, and as
    many again once the checkpoint copied them, none of them twice."""
    path = tmp_path / "meter.sqlite3"
    db = Database(f"sqlite:///{path}")
    checkpoints = Checkpoints(db.engine)
    with db.write() as conn:
        without_autocheckpoint(conn)
        conn.exec_driver_sql("CREATE TABLE blobs (b BLOB)")
    checkpoints()
    mib = 1024 * 1024

    def add_mib() -> None:
        with db.write() as conn:
            without_autocheckpoint(conn)
            conn.exec_driver_sql(f"INSERT INTO blobs VALUES (zeroblob({mib}))")

    add_mib()
    one = checkpoints()
    assert 2 * mib <= one <= 2 * mib + 8 * PAGE_SIZE  # 1 MiB logged, 1 MiB copied
    assert checkpoints() == 0  # nothing new

    reader = sqlite3.connect(path)  # holds its snapshot: the log is neither copied nor reused
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM blobs").fetchone()
    add_mib()
    logged_only = checkpoints()
    add_mib()
    assert one / 2 <= logged_only <= one / 2 + 8 * PAGE_SIZE
    assert one / 2 <= checkpoints() <= one / 2 + 8 * PAGE_SIZE
    reader.execute("COMMIT")
    reader.close()
    assert one <= checkpoints() <= one + 8 * PAGE_SIZE  # both copied now, 2 MiB in all
    db.dispose()
