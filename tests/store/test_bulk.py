"""The digest's set-based helpers: lookups of many key pairs (SQLite and PostgreSQL), and
statements run by sqlite3 on rows as they are."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.dialects import sqlite

from tests.store.test_digest_store import make_event, new_project
from tracebox.store import Database
from tracebox.store import digest as store_digest
from tracebox.store.bulk import CHUNK, SqliteStatement, rows_matching
from tracebox.store.tables import error_hourly, errors, events


def store(db: Database, project_id: int, ns: range) -> None:
    with db.write() as conn:
        store_digest.write_events(conn, [make_event(project_id, n) for n in ns])


def test_rows_matching_finds_exactly_the_stored_keys_past_one_chunk(db: Database) -> None:
    pid = new_project(db)
    store(db, pid, range(0, 2 * CHUNK + 10, 2))  # every other key of the lookup is stored
    keys = [(pid, f"{n:032x}") for n in range(2 * CHUNK + 10)]
    pair = (events.c.project_id, events.c.event_id)
    with db.read() as conn:
        found = rows_matching(conn, pair, keys, events.c.level)
    assert sorted(found) == [(pid, f"{n:032x}", "error") for n in range(0, 2 * CHUNK + 10, 2)]


def test_rows_matching_compares_whole_values_and_project(db: Database) -> None:
    pid, other = new_project(db), new_project(db, "acme/other")
    store(db, pid, range(3))
    pair = (events.c.project_id, events.c.event_id)
    stored = f"{1:032x}"
    near = [
        (pid, stored + "ff"),  # longer than the column: its first 32 characters are stored
        (pid, stored[:-1]),
        (other, stored),
    ]
    with db.read() as conn:
        assert rows_matching(conn, pair, near) == []
        assert rows_matching(conn, pair, [*near, (pid, stored)]) == [(pid, stored)]
        assert rows_matching(conn, pair, []) == []


def test_sqlite_statement_binds_a_name_once_and_keeps_its_literals(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path}/t.sqlite3")
    db.migrate()
    pid = new_project(db)
    store(db, pid, range(1))
    with db.read() as conn:
        error_id = conn.execute(sa.select(errors.c.id)).scalar_one()
    # count: a literal of the statement; b_hour: used twice, one value per row
    insert = sqlite.insert(error_hourly).values(count=7)
    statement = SqliteStatement(insert, ["error_id", "hour"], column_keys=["error_id", "hour"])
    update = (
        sa.update(error_hourly)
        .where(error_hourly.c.error_id == sa.bindparam("b_id"))
        .where(error_hourly.c.hour == sa.bindparam("b_hour"))
        .values(count=error_hourly.c.count + sa.bindparam("b_hour") - 100)
    )
    twice = SqliteStatement(update, ["b_id", "b_hour"])
    with db.write() as conn:
        conn.execute(sa.delete(error_hourly))
        statement.executemany(conn, [(error_id, 100), (error_id, 101)])
        twice.executemany(conn, [(error_id, 101)])
    with db.read() as conn:
        rows = conn.execute(sa.select(error_hourly).order_by(error_hourly.c.hour)).all()
    assert [tuple(r) for r in rows] == [(error_id, 100, 7), (error_id, 101, 8)]
    db.dispose()
