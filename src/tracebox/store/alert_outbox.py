"""The alert outbox: notifications, their deliveries, cooldowns and surge counters.

Notifications and deliveries are written in the digest's transaction (contract 8); the
sender claims due deliveries with a lease, so several nodes never send one twice while
its lease holds (``FOR UPDATE SKIP LOCKED`` on PostgreSQL; SQLite has one writer).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import Connection, Row, and_, bindparam, case, func, or_, select

from tracebox.store.dialect import insert
from tracebox.store.tables import (
    alert_cooldowns,
    alert_deliveries,
    alert_notifications,
    error_hourly,
    events,
    session_aggregates,
    sessions,
)

PENDING, SENDING, SENT, RETRYING, FAILED = "pending", "sending", "sent", "retrying", "failed"
STATUSES = (PENDING, SENDING, SENT, RETRYING, FAILED)
STORM = "storm"


@dataclass(frozen=True)
class NewDelivery:
    channel: str
    recipient: str
    action_id: int | None = None
    user_id: int | None = None


@dataclass(frozen=True)
class Delivery:
    id: int
    project_id: int
    notification_id: int
    action_id: int | None
    channel: str
    recipient: str
    user_id: int | None
    idempotency_key: str
    status: str
    attempts: int
    next_attempt_at: float
    deadline_at: float
    last_error: str | None
    response_status: int | None
    response_excerpt: str | None
    created_at: float
    updated_at: float
    sent_at: float | None
    # from the notification
    kind: str
    rule_id: int | None
    error_id: int | None
    payload: dict[str, Any]


def add_notification(
    conn: Connection,
    *,
    project_id: int,
    rule_id: int | None,
    kind: str,
    error_id: int | None,
    payload: Mapping[str, Any],
    now: float,
    folded: int = 0,
) -> int:
    values = {
        "project_id": project_id,
        "rule_id": rule_id,
        "kind": kind,
        "error_id": error_id,
        "payload": orjson.dumps(payload).decode(),
        "folded": folded,
        "created_at": now,
    }
    key = conn.execute(alert_notifications.insert().values(**values)).inserted_primary_key
    assert key is not None
    return int(key[0])


def add_deliveries(
    conn: Connection,
    project_id: int,
    notification_id: int,
    receivers: Sequence[NewDelivery],
    *,
    now: float,
    due: float,
    retry_period_s: float,
) -> None:
    rows = [
        {
            "project_id": project_id,
            "notification_id": notification_id,
            "action_id": r.action_id,
            "channel": r.channel,
            "recipient": r.recipient[:255],
            "user_id": r.user_id,
            "idempotency_key": secrets.token_hex(16),
            "status": PENDING,
            "attempts": 0,
            "next_attempt_at": due,
            "deadline_at": due + retry_period_s,
            "created_at": now,
            "updated_at": now,
        }
        for r in receivers
    ]
    if rows:
        conn.execute(alert_deliveries.insert(), rows)


def fire_cooldowns(
    conn: Connection, rule_id: int, subjects: Iterable[str], *, now: float, cooldown_s: float
) -> set[str]:
    """Record a firing for each subject not fired within ``cooldown_s``; return those.
    One atomic upsert: of two nodes firing at once, only one gets the row back."""
    rows = [
        {"rule_id": rule_id, "subject": s[:300], "fired_at": now} for s in sorted(set(subjects))
    ]
    if not rows:
        return set()
    t = alert_cooldowns
    stmt = insert(conn, t)
    stmt = stmt.on_conflict_do_update(
        index_elements=["rule_id", "subject"],
        set_={"fired_at": stmt.excluded.fired_at},
        where=t.c.fired_at <= now - cooldown_s,
    ).returning(t.c.subject)
    return {row[0] for row in conn.execute(stmt, rows)}


def in_cooldown(conn: Connection, rule_id: int, subject: str, since: float) -> bool:
    """Whether the rule fired for ``subject`` after ``since``."""
    t = alert_cooldowns
    query = select(t.c.rule_id).where(
        t.c.rule_id == rule_id, t.c.subject == subject, t.c.fired_at > since
    )
    return conn.execute(query).first() is not None


def rearm(conn: Connection, rule_id: int, subject: str) -> None:
    t = alert_cooldowns
    conn.execute(t.delete().where(t.c.rule_id == rule_id, t.c.subject == subject))


def notifications_since(conn: Connection, rule_id: int, since: float) -> int:
    """How many notifications a rule produced since ``since`` (storm detection)."""
    t = alert_notifications
    query = (
        select(func.count())
        .select_from(t)
        .where(t.c.rule_id == rule_id, t.c.created_at >= since, t.c.kind != STORM)
    )
    return int(conn.execute(query).scalar_one())


def notified_errors(conn: Connection, rule_id: int, since: float, until: float) -> list[int]:
    """Errors a rule notified one by one between ``since`` and ``until`` (a storm
    digest lists them with the folded ones)."""
    t = alert_notifications
    query = select(t.c.error_id).where(
        t.c.rule_id == rule_id,
        t.c.created_at >= since,
        t.c.created_at <= until,
        t.c.kind != STORM,
        t.c.error_id.is_not(None),
    )
    return [int(r[0]) for r in conn.execute(query)]


@dataclass(frozen=True)
class OpenStorm:
    notification_id: int
    payload: dict[str, Any]
    folded: int


def open_storm(conn: Connection, rule_id: int) -> OpenStorm | None:
    """The rule's newest storm digest whose deliveries no sender has touched yet (locked
    on PostgreSQL, so a sender's claim waits or skips them)."""
    n = alert_notifications
    row = conn.execute(
        select(n.c.id, n.c.payload, n.c.folded)
        .where(n.c.rule_id == rule_id, n.c.kind == STORM)
        .order_by(n.c.id.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    d = alert_deliveries
    query = select(d.c.status, d.c.attempts, d.c.lease_owner).where(d.c.notification_id == row.id)
    if conn.dialect.name == "postgresql":
        query = query.order_by(d.c.id).with_for_update()
    states = list(conn.execute(query))
    untouched = all(
        s.status == PENDING and s.attempts == 0 and s.lease_owner is None for s in states
    )
    if not states or not untouched:
        return None
    return OpenStorm(row.id, orjson.loads(row.payload), row.folded)


def update_storm(
    conn: Connection, storm: OpenStorm, payload: Mapping[str, Any], folded: int, due: float
) -> None:
    n, d = alert_notifications, alert_deliveries
    conn.execute(
        n.update()
        .where(n.c.id == storm.notification_id)
        .values(payload=orjson.dumps(payload).decode(), folded=folded)
    )
    conn.execute(
        d.update()
        .where(d.c.notification_id == storm.notification_id, d.c.status == PENDING)
        .values(next_attempt_at=due)
    )


# --- counts for surges and release health ---------------------------------------------


def busy_errors(
    conn: Connection, error_ids: Sequence[int], first_hour: int, at_least: int
) -> dict[int, dict[int, int]]:
    """Events per hour since ``first_hour`` (the digest's ``error_hourly``) of the errors
    that had at least ``at_least`` events in those hours; the others are left out, so a
    batch of quiet errors costs one read that returns nothing."""
    found: dict[int, dict[int, int]] = {}
    if not error_ids:
        return found
    params = {"ids": list(error_ids), "first": first_hour, "at_least": at_least}
    busy = [row[0] for row in conn.execute(_BUSY, params)]
    if busy:
        query = select(error_hourly.c.error_id, error_hourly.c.hour, error_hourly.c.count)
        query = query.where(error_hourly.c.error_id.in_(busy), error_hourly.c.hour >= first_hour)
        for error_id, hour, count in conn.execute(query):
            found.setdefault(int(error_id), {})[int(hour)] = int(count)
    return found


# Built once, compiled once (the digest runs it every batch): error_hourly's primary key.
_BUSY = (
    select(error_hourly.c.error_id)
    .where(
        error_hourly.c.error_id.in_(bindparam("ids", expanding=True)),
        error_hourly.c.hour >= bindparam("first"),
    )
    .group_by(error_hourly.c.error_id)
    .having(func.sum(error_hourly.c.count) >= bindparam("at_least"))
)


def events_between(conn: Connection, error_id: int, since: float, until: float | None) -> int:
    """An error's events with ``since <= timestamp`` (``< until``), from the events index
    (ix_events_error_time)."""
    e = events
    query = select(func.count()).where(e.c.error_id == error_id, e.c.timestamp >= since)
    if until is not None:
        query = query.where(e.c.timestamp < until)
    return int(conn.execute(query).scalar_one())


def users_since(conn: Connection, error_id: int, since: float) -> int:
    """Distinct users of an error's events since ``since`` (ix_events_error_time)."""
    e = events
    query = select(func.count(func.distinct(e.c.user_key))).where(
        e.c.error_id == error_id, e.c.timestamp >= since, e.c.user_key.is_not(None)
    )
    return int(conn.execute(query).scalar_one())


def session_counts(
    conn: Connection, project_id: int, release: str, environment: str | None
) -> tuple[int, int]:
    """(sessions, crashed) of one release, single and pre-aggregated sessions added up
    (ix_sessions_release, ix_session_aggregates_release)."""
    s, a = sessions.c, session_aggregates.c
    single = select(func.count(), func.sum(case((s.status == "crashed", 1), else_=0))).where(
        s.project_id == project_id, s.release == release
    )
    grouped = select(
        func.sum(a.exited + a.errored + a.crashed + a.abnormal), func.sum(a.crashed)
    ).where(a.project_id == project_id, a.release == release)
    if environment:
        single = single.where(s.environment == environment)
        grouped = grouped.where(a.environment == environment)
    total, crashed = 0, 0
    for query in (single, grouped):
        row = conn.execute(query).one()
        total, crashed = total + int(row[0] or 0), crashed + int(row[1] or 0)
    return total, crashed


# --- the sender -----------------------------------------------------------------------


def claim(
    conn: Connection, *, owner: str, now: float, limit: int, lease_s: float
) -> list[Delivery]:
    """Take up to ``limit`` due deliveries (or ones whose lease expired) for ``owner``."""
    d = alert_deliveries
    due = or_(
        and_(d.c.status.in_((PENDING, RETRYING)), d.c.next_attempt_at <= now),
        and_(d.c.status == SENDING, d.c.lease_until < now),
    )
    pick = select(d.c.id).where(due).order_by(d.c.next_attempt_at, d.c.id).limit(limit)
    if conn.dialect.name == "postgresql":
        pick = pick.with_for_update(skip_locked=True)
    ids = [row[0] for row in conn.execute(pick)]
    if not ids:
        return []
    conn.execute(
        d.update()
        .where(d.c.id.in_(ids))
        .values(status=SENDING, lease_owner=owner, lease_until=now + lease_s, updated_at=now)
    )
    return deliveries_by_id(conn, ids)


def deliveries_by_id(conn: Connection, ids: Sequence[int]) -> list[Delivery]:
    query = _delivery_query().where(alert_deliveries.c.id.in_(list(ids)))
    return [_delivery(r) for r in conn.execute(query.order_by(alert_deliveries.c.id))]


def finish(
    conn: Connection,
    delivery_id: int,
    owner: str,
    *,
    status: str,
    now: float,
    next_attempt_at: float | None = None,
    error: str | None = None,
    response_status: int | None = None,
    response_excerpt: str | None = None,
) -> bool:
    """Record an attempt's outcome, if ``owner`` still holds the lease."""
    d = alert_deliveries
    values: dict[str, Any] = {
        "status": status,
        "attempts": d.c.attempts + 1,
        "lease_owner": None,
        "lease_until": None,
        "last_error": error,
        "response_status": response_status,
        "response_excerpt": response_excerpt,
        "updated_at": now,
    }
    if next_attempt_at is not None:
        values["next_attempt_at"] = next_attempt_at
    if status == SENT:
        values["sent_at"] = now
    done = conn.execute(
        d.update().where(d.c.id == delivery_id, d.c.lease_owner == owner).values(**values)
    )
    return done.rowcount > 0


def release(conn: Connection, delivery_id: int, owner: str) -> None:
    """Hand a claimed delivery back unsent (its sender is stopping)."""
    d = alert_deliveries
    conn.execute(
        d.update()
        .where(d.c.id == delivery_id, d.c.lease_owner == owner, d.c.status == SENDING)
        .values(status=RETRYING, lease_owner=None, lease_until=None)
    )


def retry_now(
    conn: Connection, project_id: int, delivery_id: int, *, now: float, period_s: float
) -> bool:
    """Make a failed or retrying delivery due now, with a fresh retry period."""
    d = alert_deliveries
    done = conn.execute(
        d.update()
        .where(
            d.c.id == delivery_id,
            d.c.project_id == project_id,
            d.c.status.in_((FAILED, RETRYING)),
        )
        .values(status=RETRYING, next_attempt_at=now, deadline_at=now + period_s, updated_at=now)
    )
    return done.rowcount > 0


def get_delivery(conn: Connection, project_id: int, delivery_id: int) -> Delivery | None:
    d = alert_deliveries
    query = _delivery_query().where(d.c.id == delivery_id, d.c.project_id == project_id)
    row = conn.execute(query).first()
    return _delivery(row) if row else None


def list_deliveries(
    conn: Connection,
    project_id: int,
    *,
    status: str | None,
    before: tuple[float, int] | None,
    limit: int,
) -> list[Delivery]:
    """A project's deliveries, newest first; keyset ``before`` = (created_at, id)
    (ix_alert_deliveries_project)."""
    d = alert_deliveries
    query = _delivery_query().where(d.c.project_id == project_id)
    if status:
        query = query.where(d.c.status == status)
    if before is not None:
        at, last_id = before
        query = query.where(or_(d.c.created_at < at, and_(d.c.created_at == at, d.c.id < last_id)))
    query = query.order_by(d.c.created_at.desc(), d.c.id.desc()).limit(limit)
    return [_delivery(r) for r in conn.execute(query)]


def status_counts(conn: Connection, project_id: int) -> dict[str, int]:
    d = alert_deliveries
    query = (
        select(d.c.status, func.count()).where(d.c.project_id == project_id).group_by(d.c.status)
    )
    return {s: int(n) for s, n in conn.execute(query)}


def prune(conn: Connection, *, cooldowns_before: float, log_before: float) -> None:
    """Forget cooldowns and finished deliveries that no longer matter."""
    conn.execute(alert_cooldowns.delete().where(alert_cooldowns.c.fired_at < cooldowns_before))
    n = alert_notifications
    old = select(n.c.id).where(n.c.created_at < log_before)
    d = alert_deliveries
    unfinished = select(d.c.notification_id).where(d.c.status.not_in((SENT, FAILED)))
    conn.execute(n.delete().where(n.c.id.in_(old), n.c.id.not_in(unfinished)))


def _delivery_query() -> Any:
    d, n = alert_deliveries, alert_notifications
    return select(d, n.c.kind, n.c.rule_id, n.c.error_id, n.c.payload).select_from(
        d.join(n, n.c.id == d.c.notification_id)
    )


def _delivery(row: Row[Any]) -> Delivery:
    m = dict(row._mapping)
    for name in ("lease_owner", "lease_until"):
        m.pop(name, None)
    m["payload"] = orjson.loads(m["payload"])
    return Delivery(**m)
