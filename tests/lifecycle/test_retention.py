"""Retention by age and by count, and the disk budget: only raw events go; errors, their
counts, users, hourly counts, first and last seen stay exactly as they were."""

from __future__ import annotations

import dataclasses
import hashlib
import random
import time

import sqlalchemy as sa
import zstandard

from tests.lifecycle.helpers import DAY, aggregates, event, event_ids, project, store
from tracebox.config import Settings
from tracebox.lifecycle.cleanup import CleanupLoop
from tracebox.store import Database, attachments, client_reports, logs, retention, usage
from tracebox.store.tables import usage_hourly


def loop(db: Database, settings: Settings, **overrides: object) -> CleanupLoop:
    return CleanupLoop(db, dataclasses.replace(settings, **overrides))


def expired_counts(db: Database, project_id: int) -> dict[str, int]:
    t = usage_hourly
    query = (
        sa.select(t.c.reason, sa.func.sum(t.c.count))
        .where(t.c.project_id == project_id, t.c.outcome == "expired")
        .group_by(t.c.reason)
    )
    with db.read() as conn:
        return {r: int(n) for r, n in conn.execute(query)}


def test_events_older_than_the_maximum_age_go_and_every_aggregate_stays(
    db: Database, settings: Settings
) -> None:
    p = project(db, "acme/web")
    now = time.time()
    old = [event("old", user={"id": f"u{i}"}) for i in range(3)]
    store(db, p, *old, at=now - 100 * DAY)
    store(db, p, event("old"), event("recent-of-old-error"), at=now - 10 * DAY)
    store(db, p, event("only-old", exc_type="X"), at=now - 95 * DAY)  # an error that expires whole
    before = aggregates(db)
    kept = event_ids(db)[3:5]

    report = loop(db, settings).run_once()

    assert event_ids(db) == kept
    assert aggregates(db) == before
    assert report.removed["age"] == 4
    assert expired_counts(db, p) == {"age": 4}
    with db.read() as conn:
        assert usage.stored(conn, p)["events"].items == 2


def test_a_project_may_keep_events_for_less_time_than_the_instance(
    db: Database, settings: Settings
) -> None:
    short, default = project(db, "acme/short"), project(db, "acme/default")
    with db.write() as conn:
        retention.put(conn, short, max_age_days=7, max_events_per_error=None)
    for p in (short, default):
        store(db, p, event(), at=time.time() - 8 * DAY)
        store(db, p, event(), at=time.time() - 1 * DAY)

    loop(db, settings).run_once()

    assert len(event_ids(db, short)) == 1
    assert len(event_ids(db, default)) == 2


def test_an_error_keeps_its_first_event_and_its_latest_n(db: Database, settings: Settings) -> None:
    p = project(db, "acme/web")
    now = time.time()
    for i in range(30):  # one error, 30 events an hour apart, oldest first
        store(db, p, event("same", user={"id": f"u{i % 7}"}), at=now - (30 - i) * 3600)
    store(db, p, event("other", exc_type="Other"), at=now)  # another error, untouched
    ids = event_ids(db)
    before = aggregates(db)

    report = loop(db, settings, retention_events_per_error=10).run_once()

    assert event_ids(db) == [ids[0], *ids[20:30], ids[30]]
    assert aggregates(db) == before
    assert report.removed["count"] == 19
    assert expired_counts(db, p) == {"count": 19}


def test_retention_at_the_limit_removes_nothing(db: Database, settings: Settings) -> None:
    p = project(db, "acme/web")
    now = time.time()
    for i in range(11):  # exactly the first and the latest 10
        store(db, p, event("same"), at=now - (11 - i) * 60)
    store(db, p, event("edge", exc_type="Edge"), at=now - 90 * DAY + 60)  # a minute inside 90 days

    report = loop(db, settings, retention_events_per_error=10).run_once()

    assert sum(report.removed.values()) == 0
    assert len(event_ids(db)) == 12


def test_the_disk_budget_removes_the_oldest_events_across_projects_first(
    db: Database, settings: Settings
) -> None:
    a, b = project(db, "acme/a"), project(db, "acme/b")
    now = time.time()
    rng = random.Random(13)
    for i in range(300):  # interleaved projects, oldest first, all within retention
        blob = rng.randbytes(6000).hex()  # does not compress: every event needs its pages
        store(db, (a, b)[i % 2], event(f"e{i}", extra={"blob": blob}), at=now - 3600 + i)
    ids = event_ids(db)
    cleaner = loop(db, settings)
    used = cleaner.run_once().used_bytes_after
    budget = int(used * 0.6)

    report = loop(db, settings, max_data_bytes=budget).run_once()

    remaining = event_ids(db)
    assert report.removed["disk_budget"] > 0
    assert remaining == ids[len(ids) - len(remaining) :]  # exactly the newest ones are left
    assert report.used_bytes_after <= budget
    assert expired_counts(db, a)["disk_budget"] + expired_counts(db, b)["disk_budget"] == (
        len(ids) - len(remaining)
    )


def test_cleanup_holds_the_write_lock_only_briefly_and_reports_it(
    db: Database, settings: Settings
) -> None:
    p = project(db, "acme/web")
    store(db, p, *[event(f"e{i}") for i in range(300)], at=time.time() - 200 * DAY)

    report = loop(db, settings, cleanup_lock_target_ms=5.0).run_once()

    assert report.removed["age"] == 300
    assert report.lock.transactions >= 2  # small batches, not one big transaction
    assert report.lock.longest_ms > 0


def test_logs_and_attachments_go_with_the_maximum_age_and_their_events(
    db: Database, settings: Settings
) -> None:
    p = project(db, "acme/web")
    now = time.time()
    store(db, p, event("old"), at=now - 100 * DAY)
    store(db, p, event("recent"), at=now - DAY)
    old_event, recent_event = event_ids(db, p)
    with db.write() as conn:
        logs.write(conn, [_log(p, now - 100 * DAY), _log(p, now - DAY)])
        attachments.write(
            conn,
            [_attachment(p, old_event, now - DAY), _attachment(p, recent_event, now - DAY)],
            max_project_bytes=10**9,
        )

    loop(db, settings).run_once()

    with db.read() as conn:
        assert [r.timestamp for r in logs.search(conn, p, limit=10)] == [now - DAY]
        assert attachments.for_event(conn, p, old_event) == []  # went with its event
        assert len(attachments.for_event(conn, p, recent_event)) == 1
        assert logs.usage(conn, p)[0] == 1 and attachments.usage(conn, p)[0] == 1


def _log(project_id: int, at: float) -> logs.NewLog:
    return logs.NewLog(project_id, at, "info", 9, "hello", None, None, None, None, None, "{}", 5)


def _attachment(project_id: int, event_id: str, at: float) -> attachments.NewAttachment:
    data = b"receipt"
    return attachments.NewAttachment(
        project_id, event_id, "r.txt", "text/plain", "event.attachment", len(data),
        hashlib.sha1(data).hexdigest(), (zstandard.compress(data),), at,
    )  # fmt: skip


def test_usage_and_client_report_counters_are_kept_for_the_usage_retention(
    db: Database, settings: Settings
) -> None:
    p = project(db, "acme/web")
    now = time.time()
    hour = int(now // 3600)
    first_kept = hour - settings.usage_retention_days * 24
    with db.write() as conn:
        client_reports.add(
            conn,
            {
                (p, first_kept - 1, "error", "before_send"): 3,
                (p, first_kept, "error", "sample_rate"): 2,
            },
        )

    # The cleanup reads the test's clock: were the hour to turn between the two readings,
    # the counters "at the limit" would be an hour past it.
    CleanupLoop(db, settings, clock=lambda: now).run_once()

    with db.read() as conn:
        kept = client_reports.totals(conn, p, since_hour=0)
    assert [(d.reason, d.count) for d in kept] == [("sample_rate", 2)]  # at the limit: kept
