"""Merging errors into one and splitting a fingerprint back out (issue 15).

Both re-point grouping hashes (``error_hashes``), so the caller bumps the project's
grouping epoch first in the same transaction (``error_hashes.bump_epoch``): every
digest then forgets its cached hash -> error ids, and future events of either
fingerprint go where the hashes now point.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, Connection, cast, func, literal, select

from tracebox.store import dictionaries
from tracebox.store.dialect import insert
from tracebox.store.errors_read import EVENT_COLUMNS, EventRow, event_row
from tracebox.store.tables import (
    error_hashes,
    error_hourly,
    error_redirects,
    error_tags,
    error_users,
    errors,
    events,
)
from tracebox.store.triage import chunks

# Columns that follow the error's newest event (as the digest's update does).
LATEST = ("title", "value", "culprit", "level", "last_release", "last_event_id")


@dataclass(frozen=True)
class Member:
    id: int
    events_count: int
    first_seen: float
    last_seen: float
    assignee_id: int | None


def members(
    conn: Connection, project_id: int, ids: Sequence[int], *, lock: bool = False
) -> list[Member]:
    """The project's errors among ``ids``; with ``lock`` (in a write transaction), locked
    in id order (FOR UPDATE on PostgreSQL)."""
    found: list[Member] = []
    for chunk in chunks(sorted(set(ids))):
        query = (
            select(
                errors.c.id,
                errors.c.events_count,
                errors.c.first_seen,
                errors.c.last_seen,
                errors.c.assignee_id,
            )
            .where(errors.c.project_id == project_id, errors.c.id.in_(chunk))
            .order_by(errors.c.id)
        )
        if lock:
            query = query.with_for_update()
        found += [Member(*row) for row in conn.execute(query)]
    return found


def merge_into(conn: Connection, project_id: int, target: int, sources: Sequence[int]) -> None:
    """Move the events, users, hourly and tag counts, hashes and redirects of ``sources``
    into ``target``, then delete ``sources`` (their activity is the caller's to move)."""
    sources = [s for s in sources if s != target]
    if not sources:
        return
    conn.execute(
        error_hashes.update().where(error_hashes.c.error_id.in_(sources)).values(error_id=target)
    )
    conn.execute(events.update().where(events.c.error_id.in_(sources)).values(error_id=target))
    _add_users(
        conn, target, select(error_users.c.user_key).where(error_users.c.error_id.in_(sources))
    )
    _add_hourly(conn, target, sources)
    _add_tags(conn, target, sources)
    _adopt_latest(conn, target, sources)
    _sum_counts(conn, target, sources)
    conn.execute(
        error_redirects.update()
        .where(error_redirects.c.target_id.in_(sources))
        .values(target_id=target)
    )
    conn.execute(
        insert(conn, error_redirects).on_conflict_do_nothing(index_elements=["error_id"]),
        [{"error_id": s, "project_id": project_id, "target_id": target} for s in sources],
    )
    conn.execute(errors.delete().where(errors.c.id.in_(sources)))


def _add_users(conn: Connection, target: int, user_keys: Any) -> None:
    rows = [{"error_id": target, "user_key": k} for (k,) in conn.execute(user_keys.distinct())]
    if rows:
        stmt = insert(conn, error_users).on_conflict_do_nothing(
            index_elements=["error_id", "user_key"]
        )
        for start in range(0, len(rows), 500):
            conn.execute(stmt, rows[start : start + 500])


def _add_hourly(conn: Connection, target: int, sources: Sequence[int]) -> None:
    h = error_hourly
    query = (
        select(h.c.hour, func.sum(h.c.count)).where(h.c.error_id.in_(sources)).group_by(h.c.hour)
    )
    rows = [{"error_id": target, "hour": hour, "count": int(n)} for hour, n in conn.execute(query)]
    if rows:
        stmt = insert(conn, h)
        stmt = stmt.on_conflict_do_update(
            index_elements=["error_id", "hour"], set_={"count": h.c.count + stmt.excluded.count}
        )
        conn.execute(stmt, rows)


def _add_tags(conn: Connection, target: int, sources: Sequence[int]) -> None:
    t = error_tags
    query = (
        select(t.c.project_id, t.c.key, t.c.value, func.sum(t.c.count), func.max(t.c.last_seen))
        .where(t.c.error_id.in_(sources))
        .group_by(t.c.project_id, t.c.key, t.c.value)
    )
    rows = [
        {
            "project_id": p,
            "error_id": target,
            "key": k,
            "value": v,
            "count": int(n),
            "last_seen": ls,
        }
        for p, k, v, n, ls in conn.execute(query)
    ]
    upsert_tags(conn, rows)


def upsert_tags(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Add counts to an error's tags (rows of ``error_tags``)."""
    if not rows:
        return
    t = error_tags
    stmt = insert(conn, t)
    stmt = stmt.on_conflict_do_update(
        index_elements=["error_id", "key", "value"],
        set_={
            "count": t.c.count + stmt.excluded.count,
            "last_seen": func.max(t.c.last_seen, stmt.excluded.last_seen)
            if conn.dialect.name == "sqlite"
            else func.greatest(t.c.last_seen, stmt.excluded.last_seen),
        },
    )
    for start in range(0, len(rows), 500):
        conn.execute(stmt, rows[start : start + 500])


def _adopt_latest(conn: Connection, target: int, sources: Sequence[int]) -> None:
    """The newest event's title, culprit... and the earliest first release win."""
    cols = [errors.c.id, errors.c.first_seen, errors.c.last_seen, errors.c.first_release]
    everyone = [*sources, target]
    rows = conn.execute(
        select(*cols, *(errors.c[n] for n in LATEST)).where(errors.c.id.in_(everyone))
    ).all()
    newest = max(rows, key=lambda r: (r.last_seen, r.id == target))
    oldest = min(rows, key=lambda r: (r.first_seen, r.id != target))
    values = {n: getattr(newest, n) for n in LATEST}
    values["first_release"] = oldest.first_release
    conn.execute(errors.update().where(errors.c.id == target).values(**values))


def _sum_counts(conn: Connection, target: int, sources: Sequence[int]) -> None:
    everyone = [*sources, target]
    total, first, last = conn.execute(
        select(
            func.sum(errors.c.events_count),
            func.min(errors.c.first_seen),
            func.max(errors.c.last_seen),
        ).where(errors.c.id.in_(everyone))
    ).one()
    users = select(func.count()).where(error_users.c.error_id == target).scalar_subquery()
    conn.execute(
        errors.update()
        .where(errors.c.id == target)
        .values(events_count=int(total), first_seen=first, last_seen=last, users_count=users)
    )


def resolve_redirect(conn: Connection, project_id: int, error_id: int) -> int | None:
    """The error a merged error's id now stands for, if it was merged away."""
    value = conn.execute(
        select(error_redirects.c.target_id).where(
            error_redirects.c.error_id == error_id, error_redirects.c.project_id == project_id
        )
    ).scalar()
    return int(value) if value is not None else None


def events_after(conn: Connection, error_id: int, row_id: int, limit: int) -> list[EventRow]:
    """An error's events stored after the row ``row_id`` (row id order)."""
    query = (
        select(*EVENT_COLUMNS)
        .where(events.c.error_id == error_id, events.c.id > row_id)
        .order_by(events.c.id)
        .limit(limit)
    )
    find = dictionaries.lookup(conn)
    return [event_row(r, find) for r in conn.execute(query)]


def hashes_of(conn: Connection, error_id: int) -> list[str]:
    query = select(error_hashes.c.hash).where(error_hashes.c.error_id == error_id)
    return sorted(str(h) for h in conn.execute(query).scalars())


# --- unmerge -----------------------------------------------------------------------


@dataclass(frozen=True)
class NewError:
    """The error an unmerged fingerprint becomes (from its newest event)."""

    grouping_hash: str
    grouping_version: str
    fingerprint: str
    title: str
    type: str
    value: str
    culprit: str
    platform: str
    level: str
    first_release: str | None
    last_release: str | None
    last_event_id: str


def split_off(
    conn: Connection,
    project_id: int,
    source: int,
    new: NewError,
    event_ids: Sequence[int],
    tags: Mapping[tuple[str, str], tuple[int, float]],
    now: float,
) -> int:
    """Create the error ``new``, point its hash at it, move the events (row ids) there,
    and recount both errors. ``tags``: the moved events' tag counts and last seen."""
    row = {**new.__dict__, "project_id": project_id, "status": "unresolved", "regressed": False}
    row.update(first_seen=now, last_seen=now, events_count=0, users_count=0)
    created = conn.execute(errors.insert().values(**row)).inserted_primary_key
    assert created is not None
    target = int(created[0])
    conn.execute(
        error_hashes.update()
        .where(error_hashes.c.project_id == project_id, error_hashes.c.hash == new.grouping_hash)
        .values(error_id=target)
    )
    for chunk in chunks(list(event_ids)):
        conn.execute(events.update().where(events.c.id.in_(chunk)).values(error_id=target))
    for error_id in (source, target):
        _recount(conn, error_id)
    _move_tags(conn, project_id, source, target, tags)
    return target


def _recount(conn: Connection, error_id: int) -> None:
    """Events, users and hourly counts of an error, from its events."""
    mine = events.c.error_id == error_id
    conn.execute(error_users.delete().where(error_users.c.error_id == error_id))
    _add_users(
        conn, error_id, select(events.c.user_key).where(mine, events.c.user_key.is_not(None))
    )
    conn.execute(error_hourly.delete().where(error_hourly.c.error_id == error_id))
    hour = cast(events.c.timestamp / 3600, BigInteger)
    if conn.dialect.name == "postgresql":
        hour = cast(func.floor(events.c.timestamp / 3600), BigInteger)
    counts = select(literal(error_id), hour.label("h"), func.count()).where(mine).group_by("h")
    conn.execute(error_hourly.insert().from_select(["error_id", "hour", "count"], counts))
    n, first, last = conn.execute(
        select(func.count(), func.min(events.c.timestamp), func.max(events.c.timestamp)).where(mine)
    ).one()
    users = select(func.count()).where(error_users.c.error_id == error_id).scalar_subquery()
    values: dict[str, Any] = {"events_count": int(n), "users_count": users}
    if n:
        values.update(first_seen=first, last_seen=last)
    conn.execute(errors.update().where(errors.c.id == error_id).values(**values))


def _move_tags(
    conn: Connection,
    project_id: int,
    source: int,
    target: int,
    tags: Mapping[tuple[str, str], tuple[int, float]],
) -> None:
    t = error_tags
    for (key, value), (n, _) in sorted(tags.items()):
        conn.execute(
            t.update()
            .where(t.c.error_id == source, t.c.key == key, t.c.value == value)
            .values(count=t.c.count - n)
        )
    conn.execute(t.delete().where(t.c.error_id == source, t.c.count <= 0))
    rows = [
        {
            "project_id": project_id,
            "error_id": target,
            "key": k,
            "value": v,
            "count": n,
            "last_seen": ls,
        }
        for (k, v), (n, ls) in sorted(tags.items())
    ]
    upsert_tags(conn, rows)
