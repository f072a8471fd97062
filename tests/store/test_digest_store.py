"""The digest's batch write on SQLite and PostgreSQL: grouping rows, counts, idempotency."""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor

import pytest
import sqlalchemy as sa

from tracebox.config import Settings
from tracebox.store import Database, client_keys, errors_read, projects
from tracebox.store import digest as store_digest
from tracebox.store import error_hashes as error_hashes_store
from tracebox.store.digest import PreparedEvent
from tracebox.store.error_hashes import ErrorIdCache
from tracebox.store.tables import error_hashes, error_hourly, error_tags, errors, events

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


SESSION = {
    "did": None,
    "release": "1.0",
    "environment": "prod",
    "started": BASE_TS,
    "timestamp": BASE_TS,
    "errors": 0,
    "duration": 1.5,
}


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
    base = {**SESSION, "did": "u1", "duration": None}
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
    base = SESSION
    batch = [{**base, "sid": f"s{n}", "seq": 0, "status": "ok"} for n in range(3)]
    update = [{**base, "sid": f"s{n}", "seq": 1, "status": "exited"} for n in range(3)]
    with db.write() as conn:
        store_digest.write_sessions(conn, pid, batch)
        store_digest.write_sessions(conn, pid, update)
    with db.read() as conn:
        rows = conn.execute(sa.text("SELECT sid, status FROM sessions ORDER BY sid")).all()
    assert [tuple(r) for r in rows] == [("s0", "exited"), ("s1", "exited"), ("s2", "exited")]


def test_batch_result_names_created_and_reopened_errors_with_their_events(db: Database) -> None:
    pid = new_project(db)
    with db.write() as conn:
        first = store_digest.write_events(conn, [make_event(pid, n) for n in (3, 1, 2)])
    [created] = first.created
    assert (created.project_id, created.event_id) == (pid, f"{3:032x}")  # batch order
    assert first.counts == {created.error_id: store_digest.ErrorCounts(events=3, new_users=3)}
    assert first.regressed == []
    with db.write() as conn:
        conn.execute(errors.update().values(status="resolved"))
    with db.write() as conn:
        again = store_digest.write_events(conn, [make_event(pid, 5), make_event(pid, 4)])
    assert again.created == []
    assert again.regressed == [store_digest.ErrorEvent(created.error_id, pid, f"{5:032x}")]
    assert again.counts[created.error_id] == store_digest.ErrorCounts(events=2, new_users=0)


def test_an_older_grouping_versions_hash_keeps_the_error(db: Database) -> None:
    """Issue 17: after a grouping version bump, events of an old error still find it."""
    pid = new_project(db)
    with db.write() as conn:
        store_digest.write_events(conn, [make_event(pid, 1, grouping_hash="1" * 32)])
    moved = [
        make_event(pid, 2, grouping_hash="2" * 32, fallback_hashes=("1" * 32,)),
        make_event(pid, 3, grouping_hash="3" * 32, fallback_hashes=("9" * 32, "1" * 32)),
    ]
    with db.write() as conn:
        result = store_digest.write_events(conn, moved)
    assert result.created == []
    assert error_row(db)["events_count"] == 3
    with db.read() as conn:
        hashes = dict(conn.execute(sa.select(error_hashes.c.hash, error_hashes.c.error_id)).all())
    assert set(hashes) == {"1" * 32, "2" * 32, "3" * 32}  # the new hashes answer to it now
    assert len(set(hashes.values())) == 1


def test_the_current_hash_wins_over_a_fallback(db: Database) -> None:
    pid = new_project(db)
    with db.write() as conn:
        store_digest.write_events(conn, [make_event(pid, 1, grouping_hash="1" * 32)])
        store_digest.write_events(conn, [make_event(pid, 2, grouping_hash="2" * 32)])
    with db.write() as conn:
        store_digest.write_events(
            conn, [make_event(pid, 3, grouping_hash="2" * 32, fallback_hashes=("1" * 32,))]
        )
    with db.read() as conn:
        counts = conn.execute(
            sa.select(errors.c.grouping_hash, errors.c.events_count).order_by(errors.c.id)
        ).all()
    assert [tuple(c) for c in counts] == [("1" * 32, 1), ("2" * 32, 2)]


def test_cached_error_ids_are_dropped_when_the_grouping_epoch_moves(db: Database) -> None:
    pid = new_project(db)
    cache = ErrorIdCache()
    with db.write() as conn:
        store_digest.write_events(conn, [make_event(pid, 1)], cache)
    with db.write() as conn:
        store_digest.write_events(conn, [make_event(pid, 2)], cache)  # looked up: now cached
    assert cache.get(pid, "a" * 32) == error_row(db)["id"]
    with db.write() as conn:  # what deleting (or merging) errors must do
        error_hashes_store.bump_epoch(conn, pid)
        conn.execute(errors.delete())
    with db.write() as conn:
        result = store_digest.write_events(conn, [make_event(pid, 3)], cache)
    assert result.errors_created == 1  # not the deleted error's id from the cache
    assert error_row(db)["events_count"] == 1


def test_tags_are_counted_per_error_once(db: Database) -> None:
    pid = new_project(db)
    batch = [
        make_event(pid, n, tags=(("level", "error"), ("browser", f"Chrome {n % 2}")))
        for n in range(5)
    ]
    for _ in range(2):  # a replay counts nothing
        with db.write() as conn:
            store_digest.write_events(conn, batch)
    with db.read() as conn:
        rows = conn.execute(
            sa.select(
                error_tags.c.key, error_tags.c.value, error_tags.c.count, error_tags.c.last_seen
            ).order_by(error_tags.c.key, error_tags.c.value)
        ).all()
        top = errors_read.top_tags(conn, error_row(db)["id"], keys=20, values=1)
    assert [tuple(r) for r in rows] == [
        ("browser", "Chrome 0", 3, BASE_TS + 4),
        ("browser", "Chrome 1", 2, BASE_TS + 3),
        ("level", "error", 5, BASE_TS + 4),
    ]
    assert top == [
        errors_read.TagCounts("browser", 5, [("Chrome 0", 3)]),
        errors_read.TagCounts("level", 5, [("error", 5)]),
    ]


@pytest.mark.postgres
def test_two_digests_writing_the_same_errors_never_deadlock(settings: Settings) -> None:
    """Two nodes' digests update the same errors, hourly counts and tags at once, their
    batches in opposite orders: keys are written sorted, so neither waits on the other
    in a cycle (PostgreSQL would abort one with a deadlock)."""
    if not settings.database_url:
        pytest.skip("PostgreSQL only: SQLite has one writer at a time")
    db = Database(settings.resolved_database_url())
    db.migrate()
    try:
        pid = new_project(db)
        hashes = [f"{n:032x}" for n in range(40)]
        with db.write() as conn:  # the errors exist: both digests only update them
            store_digest.write_events(
                conn, [make_event(pid, n, grouping_hash=h) for n, h in enumerate(hashes)]
            )

        def digest(offset: int, order: int) -> None:
            for round_ in range(15):
                batch = [
                    make_event(
                        pid, 1000 * (offset + 2 * round_) + n, grouping_hash=h, tags=(("t", h),)
                    )
                    for n, h in enumerate(hashes)
                ]
                with db.write() as conn:
                    store_digest.write_events(conn, batch[::order])

        with ThreadPoolExecutor(2) as pool:
            for done in [pool.submit(digest, 1, 1), pool.submit(digest, 2, -1)]:
                done.result()  # raises if PostgreSQL aborted a batch
        with db.read() as conn:
            total = conn.execute(sa.select(sa.func.sum(errors.c.events_count))).scalar_one()
        assert total == 40 + 2 * 15 * 40
    finally:
        db.dispose()


def test_updates_of_one_session_in_one_batch_apply_in_order(db: Database) -> None:
    """Its start and its end often share a digest batch (PostgreSQL refuses to upsert one
    row twice in a statement, so each is applied as one by one would)."""
    pid = new_project(db)
    base = {**SESSION, "did": "u1", "duration": None}
    updates = [
        {**base, "sid": "s1", "seq": 0, "status": "ok"},
        {**base, "sid": "s2", "seq": 0, "status": "ok"},
        {**base, "sid": "s1", "seq": 2, "status": "crashed"},
        {**base, "sid": "s1", "seq": 3, "status": "exited"},  # after crashed: ignored
        {**base, "sid": "s2", "seq": 1, "status": "exited"},
    ]
    with db.write() as conn:
        store_digest.write_sessions(conn, pid, updates)
    with db.read() as conn:
        rows = conn.execute(sa.text("SELECT sid, seq, status FROM sessions ORDER BY sid")).all()
    assert [tuple(r) for r in rows] == [("s1", 2, "crashed"), ("s2", 1, "exited")]
