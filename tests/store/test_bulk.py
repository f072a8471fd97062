"""The digest's set-based helpers: lookups of many key pairs (SQLite and PostgreSQL), and
statements run by sqlite3 on rows as they are."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import sqlite

from tests.store.test_digest_store import make_event, new_project
from tracebox.store import Database, bulk
from tracebox.store import digest as store_digest
from tracebox.store.bulk import (
    CHUNK,
    SqliteStatement,
    _matching_sqlite,
    json_rows,
    rows_matching,
)
from tracebox.store.tables import error_hashes, error_hourly, error_users, errors, events


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


LOOKUPS = [  # every pair the digest looks up, with the unique index that answers it
    (events.c.project_id, events.c.event_id),
    (errors.c.project_id, errors.c.grouping_hash),
    (error_hashes.c.project_id, error_hashes.c.hash),
    (error_users.c.error_id, error_users.c.user_key),
]


@pytest.mark.parametrize("pair", LOOKUPS, ids=lambda pair: pair[0].table.name)
def test_sqlite_lookups_search_the_index_instead_of_scanning_the_table(
    tmp_path: Path, pair: tuple[sa.Column[Any], sa.Column[Any]]
) -> None:
    """A lookup's cost must not grow with the table: ``(a, b) IN (VALUES ...)`` made
    SQLite scan the whole index, half the digest's time on 1,000,000 events."""
    db = Database(f"sqlite:///{tmp_path}/t.sqlite3")
    db.migrate()
    sql = _matching_sqlite(pair, (), 3)
    with db.read() as conn:
        plan = [row[3] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", (1, "a") * 3)]
    table = pair[0].table.name
    assert any(step.startswith(f"SEARCH {table} USING") for step in plan), plan
    assert not any(step.startswith(f"SCAN {table}") for step in plan), plan


def test_rows_matching_answers_a_key_asked_twice_once(db: Database) -> None:
    pid = new_project(db)
    store(db, pid, range(2))
    pair = (events.c.project_id, events.c.event_id)
    keys = [(pid, f"{0:032x}"), (pid, f"{1:032x}"), (pid, f"{0:032x}"), (pid, "absent")]
    with db.read() as conn:
        assert sorted(rows_matching(conn, pair, keys)) == [(pid, f"{0:032x}"), (pid, f"{1:032x}")]


AWKWARD = 'quote " backslash \\ newline \n tab \t {brace} [x] é ü 🙂 \u2028 -- ;'


def test_batch_rows_with_awkward_text_and_bytes_are_stored_exactly(db: Database) -> None:
    """On PostgreSQL a batch's rows go as one JSON text (``json_recordset``): every
    character and byte must come back as it was sent."""
    pid = new_project(db)
    payload = bytes(range(256)) * 3
    batch = [
        make_event(pid, 1, title=AWKWARD, value=AWKWARD, culprit=AWKWARD, payload=payload),
        make_event(
            pid,
            2,
            grouping_hash="b" * 32,
            environment=None,
            release=None,
            user_key=None,
            payload=b"",
        ),
    ]
    with db.write() as conn:
        store_digest.write_events(conn, batch)
    with db.read() as conn:
        stored = conn.execute(
            sa.select(events.c.event_id, events.c.payload, events.c.environment)
            .where(events.c.project_id == pid)
            .order_by(events.c.event_id)
        ).all()
        error = conn.execute(
            sa.select(errors.c.title, errors.c.culprit).where(
                errors.c.project_id == pid, errors.c.grouping_hash == "a" * 32
            )
        ).one()
    assert [(r.event_id, bytes(r.payload), r.environment) for r in stored] == [
        (f"{1:032x}", payload, "production"),
        (f"{2:032x}", b"", None),
    ]
    assert tuple(error) == (AWKWARD, AWKWARD)


@pytest.mark.parametrize("count", [1, 3, 5, 7])
def test_each_payload_is_stored_with_its_own_row(
    db: Database, count: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL a row's bytes are a parameter of their own, joined to the row's JSON
    by its place: across size classes (1, 4 and 8 places, NULLs after the rows) and
    across statements (3 rows at most here), every payload must land in its own row."""
    monkeypatch.setattr(bulk, "MAX_BINARY_ROWS", 3)
    pid = new_project(db)
    batch = [make_event(pid, n, payload=f"payload {n}".encode() * n) for n in range(count)]
    with db.write() as conn:
        store_digest.write_events(conn, batch)
    with db.read() as conn:
        stored = conn.execute(
            sa.select(events.c.event_id, events.c.payload).where(events.c.project_id == pid)
        ).all()
    assert sorted((r.event_id, bytes(r.payload)) for r in stored) == [
        (f"{n:032x}", f"payload {n}".encode() * n) for n in range(count)
    ]


def test_a_row_json_cannot_hold_is_a_database_refusal() -> None:
    """The digest sets aside what the database refuses (``SQLAlchemyError``); a row that
    cannot be written as JSON must take that path, not stop the digest."""
    write = json_rows(("a",), [sa.Text()])
    assert write([("ok",)]) == '[{"a":"ok"}]'
    with pytest.raises(sa.exc.SQLAlchemyError):
        write([("\ud800",)])
