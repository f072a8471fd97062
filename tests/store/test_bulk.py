"""The digest's set-based helpers on SQLite and PostgreSQL: lookups of many key pairs."""

from __future__ import annotations

from tests.store.test_digest_store import make_event, new_project
from tracebox.store import Database
from tracebox.store import digest as store_digest
from tracebox.store.bulk import CHUNK, rows_matching
from tracebox.store.tables import events


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
