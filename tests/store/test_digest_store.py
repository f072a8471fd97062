"""The digest's batch write on SQLite and PostgreSQL: grouping rows, counts, idempotency."""

from __future__ import annotations

import dataclasses

import sqlalchemy as sa

from tracebox.store import Database, client_keys, projects
from tracebox.store import digest as store_digest
from tracebox.store.digest import PreparedEvent
from tracebox.store.tables import error_hourly, errors, events

BASE_TS = 1_700_000_000.0


def make_event(project_id: int, n: int, **changes: object) -> PreparedEvent:
    event = PreparedEvent(
        project_id=project_id,
        event_id=f"{n:032x}",
        grouping_hash="a" * 32,
        grouping_version="test:1",
        fingerprint='["x"]',
        title="ValueError: bad",
        type="ValueError",
        value="bad",
        culprit="app in handler",
        platform="python",
        level="error",
        timestamp=BASE_TS + n,
        received=BASE_TS + n,
        environment="production",
        release="1.0",
        user_key=f"id:{n % 3}",
        payload=b"zstd",
    )
    return dataclasses.replace(event, **changes)  # type: ignore[arg-type]


def new_project(db: Database, path: str = "acme/web") -> int:
    with db.write() as conn:
        project = projects.create(conn, path, "web")
        projects.put_settings(conn, project.id, active=True, integrated=True)
        client_keys.create(conn, project.id)
    return project.id


def error_row(db: Database) -> sa.RowMapping:
    with db.read() as conn:
        return conn.execute(sa.select(errors)).mappings().one()


def test_batch_creates_one_error_with_counts(db: Database) -> None:
    pid = new_project(db)
    with db.write() as conn:
        result = store_digest.write_events(conn, [make_event(pid, n) for n in range(10)])
    assert (result.events_inserted, result.errors_created) == (10, 1)
    row = error_row(db)
    assert row["events_count"] == 10
    assert row["users_count"] == 3  # id:0, id:1, id:2
    assert (row["first_seen"], row["last_seen"]) == (BASE_TS, BASE_TS + 9)
    assert row["last_event_id"] == f"{9:032x}"
    with db.read() as conn:
        hourly = conn.execute(sa.select(sa.func.sum(error_hourly.c.count))).scalar_one()
    assert hourly == 10


def test_replaying_a_batch_changes_no_count(db: Database) -> None:
    pid = new_project(db)
    batch = [make_event(pid, n) for n in range(5)]
    for _ in range(3):
        with db.write() as conn:
            store_digest.write_events(conn, batch)
    row = error_row(db)
    assert (row["events_count"], row["users_count"]) == (5, 3)
    with db.read() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(events)).scalar_one() == 5
        hourly = conn.execute(sa.select(sa.func.sum(error_hourly.c.count))).scalar_one()
    assert hourly == 5


def test_duplicate_event_ids_within_a_batch_count_once(db: Database) -> None:
    pid = new_project(db)
    with db.write() as conn:
        result = store_digest.write_events(conn, [make_event(pid, 1), make_event(pid, 1)])
    assert result.events_inserted == 1
    assert error_row(db)["events_count"] == 1


def test_new_event_on_resolved_error_reopens_it_as_regressed(db: Database) -> None:
    pid = new_project(db)
    with db.write() as conn:
        store_digest.write_events(conn, [make_event(pid, 1)])
        conn.execute(errors.update().values(status="resolved"))
    with db.write() as conn:
        result = store_digest.write_events(conn, [make_event(pid, 2)])
    assert result.errors_regressed == 1
    row = error_row(db)
    assert (row["status"], row["regressed"], row["events_count"]) == ("unresolved", True, 2)


def test_ignored_error_stays_ignored(db: Database) -> None:
    pid = new_project(db)
    with db.write() as conn:
        store_digest.write_events(conn, [make_event(pid, 1)])
        conn.execute(errors.update().values(status="ignored"))
    with db.write() as conn:
        store_digest.write_events(conn, [make_event(pid, 2)])
    assert error_row(db)["status"] == "ignored"


def test_different_hashes_and_projects_make_different_errors(db: Database) -> None:
    pid = new_project(db)
    other = new_project(db, "acme/api")
    batch = [
        make_event(pid, 1),
        make_event(pid, 2, grouping_hash="b" * 32),
        make_event(other, 1),  # same event_id in another project is another event
    ]
    with db.write() as conn:
        result = store_digest.write_events(conn, batch)
    assert (result.events_inserted, result.errors_created) == (3, 3)


def test_older_event_does_not_move_last_seen_back(db: Database) -> None:
    pid = new_project(db)
    with db.write() as conn:
        store_digest.write_events(conn, [make_event(pid, 100, title="new")])
    with db.write() as conn:
        store_digest.write_events(conn, [make_event(pid, 1, title="old", release="0.9")])
    row = error_row(db)
    assert (row["first_seen"], row["last_seen"]) == (BASE_TS + 1, BASE_TS + 100)
    assert (row["title"], row["last_release"]) == ("new", "1.0")


def test_sessions_upsert_keeps_highest_seq_and_terminal_state(db: Database) -> None:
    pid = new_project(db)
    base = {
        "did": "u1",
        "release": "1.0",
        "environment": "prod",
        "started": BASE_TS,
        "timestamp": BASE_TS,
        "errors": 0,
        "duration": None,
    }
    with db.write() as conn:
        store_digest.write_sessions(conn, pid, [{**base, "sid": "s1", "seq": 0, "status": "ok"}])
        store_digest.write_sessions(
            conn, pid, [{**base, "sid": "s1", "seq": 2, "status": "crashed"}]
        )
        store_digest.write_sessions(conn, pid, [{**base, "sid": "s1", "seq": 1, "status": "ok"}])
        store_digest.write_sessions(
            conn, pid, [{**base, "sid": "s1", "seq": 3, "status": "exited"}]
        )
    with db.read() as conn:
        rows = conn.execute(sa.text("SELECT seq, status FROM sessions")).all()
    assert [tuple(r) for r in rows] == [(2, "crashed")]


def test_several_sessions_in_one_batch(db: Database) -> None:
    pid = new_project(db)
    base = {
        "did": None,
        "release": "1.0",
        "environment": "prod",
        "started": BASE_TS,
        "timestamp": BASE_TS,
        "errors": 0,
        "duration": 1.5,
    }
    batch = [{**base, "sid": f"s{n}", "seq": 0, "status": "ok"} for n in range(3)]
    update = [{**base, "sid": f"s{n}", "seq": 1, "status": "exited"} for n in range(3)]
    with db.write() as conn:
        store_digest.write_sessions(conn, pid, batch)
        store_digest.write_sessions(conn, pid, update)
    with db.read() as conn:
        rows = conn.execute(sa.text("SELECT sid, status FROM sessions ORDER BY sid")).all()
    assert [tuple(r) for r in rows] == [("s0", "exited"), ("s1", "exited"), ("s2", "exited")]
