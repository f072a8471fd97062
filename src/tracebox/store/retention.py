"""Retention settings per project, and the queries that find and remove stored events.

Finding is separate from removing: the lifecycle loop finds a small batch (a read), then
removes it in a short write transaction. Every finder reads through an index:
``ix_events_error_time`` (an error's events by time), ``uq_events_project_event`` (a
project's events) or the rowid (the instance's oldest events).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Select, and_, func, literal, select, tuple_

from tracebox.store.tables import errors, events, project_retention


@dataclass(frozen=True)
class RetentionSettings:
    """A project's own retention; None where it uses the instance default."""

    project_id: int
    max_age_days: int | None = None
    max_events_per_error: int | None = None
    updated_at: float | None = None


@dataclass(frozen=True)
class RemovedEvent:
    project_id: int
    error_id: int
    event_id: str
    bytes: int  # its payload


def get(conn: Connection, project_id: int) -> RetentionSettings:
    t = project_retention
    row = conn.execute(select(t).where(t.c.project_id == project_id)).first()
    return RetentionSettings(**row._mapping) if row else RetentionSettings(project_id)


def all_settings(conn: Connection) -> dict[int, RetentionSettings]:
    """Every project's own settings (projects without a row use the defaults)."""
    return {
        row.project_id: RetentionSettings(**row._mapping)
        for row in conn.execute(select(project_retention))
    }


def put(
    conn: Connection,
    project_id: int,
    *,
    max_age_days: int | None,
    max_events_per_error: int | None,
) -> RetentionSettings:
    t = project_retention
    saved = RetentionSettings(project_id, max_age_days, max_events_per_error, time.time())
    values = {
        "max_age_days": max_age_days,
        "max_events_per_error": max_events_per_error,
        "updated_at": saved.updated_at,
    }
    if not conn.execute(t.update().where(t.c.project_id == project_id).values(values)).rowcount:
        conn.execute(t.insert().values(project_id=project_id, **values))
    return saved


# --- finding events ---------------------------------------------------------------------


def errors_seen_before(
    conn: Connection, project_id: int, before: float, *, after_id: int, limit: int
) -> list[int]:
    """Errors first seen before ``before``: the only ones that may hold events older
    than it. Keyset by id."""
    query = (
        select(errors.c.id)
        .where(errors.c.project_id == project_id, errors.c.first_seen < before)
        .where(errors.c.id > after_id)
        .order_by(errors.c.id)
        .limit(limit)
    )
    return list(conn.execute(query).scalars())


def errors_with_more_than(
    conn: Connection, project_id: int, count: int, *, after_id: int, limit: int
) -> list[int]:
    """Errors that ever counted more than ``count`` events. Keyset by id."""
    query = (
        select(errors.c.id)
        .where(errors.c.project_id == project_id, errors.c.events_count > count)
        .where(errors.c.id > after_id)
        .order_by(errors.c.id)
        .limit(limit)
    )
    return list(conn.execute(query).scalars())


def events_before(conn: Connection, error_id: int, before: float, limit: int) -> list[int]:
    """The error's events older than ``before``, oldest first."""
    query = (
        select(events.c.id)
        .where(events.c.error_id == error_id, events.c.timestamp < before)
        .order_by(events.c.timestamp, events.c.id)
        .limit(limit)
    )
    return list(conn.execute(query).scalars())


def count_events_before(conn: Connection, error_id: int, before: float) -> int:
    query = select(func.count()).where(events.c.error_id == error_id, events.c.timestamp < before)
    return int(conn.execute(query).scalar_one())


def events_beyond(conn: Connection, error_id: int, keep_latest: int, limit: int) -> list[int]:
    """Events of the error that are neither its oldest nor among its latest
    ``keep_latest``, oldest first."""
    by_time = (events.c.timestamp, events.c.id)
    newest_kept = conn.execute(
        _of_error(error_id)
        .order_by(events.c.timestamp.desc(), events.c.id.desc())
        .offset(keep_latest - 1)
        .limit(1)
    ).first()
    if newest_kept is None:
        return []
    first = conn.execute(_of_error(error_id).order_by(*by_time).limit(1)).one()
    query = (
        select(events.c.id)
        .where(events.c.error_id == error_id)
        .where(tuple_(*by_time) > _edge(first), tuple_(*by_time) < _edge(newest_kept))
        .order_by(*by_time)
        .limit(limit)
    )
    return list(conn.execute(query).scalars())


def _of_error(error_id: int) -> Select[Any]:
    return select(events.c.timestamp, events.c.id).where(events.c.error_id == error_id)


def _edge(row: Any) -> Any:
    return tuple_(literal(row[0], events.c.timestamp.type), literal(row[1], events.c.id.type))


def oldest_events(conn: Connection, limit: int) -> list[int]:
    """The instance's oldest stored events (rowid order is the order they were stored)."""
    return list(conn.execute(select(events.c.id).order_by(events.c.id).limit(limit)).scalars())


def oldest_event_time(conn: Connection) -> float | None:
    first = conn.execute(select(events.c.received_at).order_by(events.c.id).limit(1)).scalar()
    return float(first) if first is not None else None


def events_of_error(conn: Connection, error_id: int, limit: int) -> list[int]:
    query = select(events.c.id).where(events.c.error_id == error_id).limit(limit)
    return list(conn.execute(query).scalars())


def events_of_project(conn: Connection, project_id: int, limit: int) -> list[int]:
    query = select(events.c.id).where(events.c.project_id == project_id).limit(limit)
    return list(conn.execute(query).scalars())


@dataclass(frozen=True)
class ScannedEvent:
    id: int
    error_id: int
    payload: bytes
    user_key: str | None


def scan_project(
    conn: Connection, project_id: int, *, after_id: int, limit: int
) -> list[ScannedEvent]:
    """The project's events after ``after_id``, in id order: the privacy deletion reads
    every event once."""
    e = events.c
    query = (
        select(e.id, e.error_id, e.payload, e.user_key)
        .where(e.project_id == project_id, e.id > after_id)
        .order_by(e.id)
        .limit(limit)
    )
    return [ScannedEvent(int(i), int(r), bytes(p), k) for i, r, p, k in conn.execute(query)]


def count_project_events_before(conn: Connection, project_id: int, before: float) -> int:
    query = select(func.count()).where(
        and_(events.c.project_id == project_id, events.c.timestamp < before)
    )
    return int(conn.execute(query).scalar_one())


# --- removing events --------------------------------------------------------------------


def remove_events(conn: Connection, ids: Sequence[int]) -> list[RemovedEvent]:
    """Delete these events; return those really deleted (another remover may have been
    first). Errors and their counts stay as they are."""
    if not ids:
        return []
    stmt = (
        events.delete()
        .where(events.c.id.in_(list(ids)))
        .returning(
            events.c.project_id,
            events.c.error_id,
            events.c.event_id,
            func.length(events.c.payload),
        )
    )
    return [RemovedEvent(int(p), int(e), ev, int(n)) for p, e, ev, n in conn.execute(stmt)]
