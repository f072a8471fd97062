"""Reading errors and events, and changing an error's status (the API's and UI's queries).

Lists paginate by keyset, never OFFSET: ``(sort value, id)`` past the cursor, newest
first, each served by one index (see the comments on ``errors`` and ``events`` in
``tables.py``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from sqlalchemy import (
    ColumnElement,
    Connection,
    Row,
    Select,
    func,
    literal,
    or_,
    select,
    tuple_,
)

from tracebox.store import dictionaries, payloads
from tracebox.store.tables import (
    error_hourly,
    error_redirects,
    error_tags,
    errors,
    events,
    project_members,
    projects,
)

AnyRow: TypeAlias = Row[*tuple[Any, ...]]

SORT_COLUMNS: dict[str, ColumnElement[Any]] = {
    "last_seen": errors.c.last_seen,  # ix_errors_list_last_seen
    "first_seen": errors.c.first_seen,  # ix_errors_list_first_seen
    "frequency": errors.c.events_count,  # ix_errors_list_frequency
}
Edge = tuple[float, int]  # (sort value, id) of the row at a page edge


@dataclass(frozen=True)
class ErrorRow:
    id: int
    project_id: int
    title: str
    type: str
    value: str
    culprit: str
    platform: str
    level: str
    status: str
    first_seen: float
    last_seen: float
    first_release: str | None
    last_release: str | None
    events_count: int
    users_count: int
    regressed: bool = False
    grouping_hash: str = ""
    last_event_id: str | None = None
    assignee_id: int | None = None
    resolution: str | None = None
    resolved_release: str | None = None
    resolved_at: float | None = None
    ignore_until: float | None = None
    ignore_count: int | None = None
    ignore_user_count: int | None = None
    inbox_at: float | None = None
    external_issue_url: str | None = None


@dataclass(frozen=True)
class EventRow:
    id: int
    project_id: int
    error_id: int
    event_id: str
    timestamp: float
    received_at: float
    level: str
    environment: str | None
    release: str | None
    payload: dict[str, Any]  # the normalized event (docs/design.md)


_ERROR_COLUMNS = [errors.c[name] for name in ErrorRow.__dataclass_fields__]
EVENT_COLUMNS = [events.c[name] for name in EventRow.__dataclass_fields__]


def _error(row: AnyRow) -> ErrorRow:
    return ErrorRow(**row._mapping)


def event_row(row: AnyRow, find: payloads.DictionaryLookup) -> EventRow:
    m = dict(row._mapping)
    m["payload"] = payloads.decode(m["payload"], find)
    return EventRow(**m)


def _keyset(
    query: Select[Any],
    col: ColumnElement[Any],
    id_col: ColumnElement[Any],
    after: Edge | None,
    before: Edge | None,
    limit: int,
) -> Select[Any]:
    """Rows after ``after`` (descending) or, for a previous page, before ``before``
    (ascending: the caller reverses them)."""
    if before is not None:
        edge = tuple_(literal(before[0], col.type), literal(before[1], id_col.type))
        return query.where(tuple_(col, id_col) > edge).order_by(col, id_col).limit(limit)
    if after is not None:
        edge = tuple_(literal(after[0], col.type), literal(after[1], id_col.type))
        query = query.where(tuple_(col, id_col) < edge)
    return query.order_by(col.desc(), id_col.desc()).limit(limit)


def list_errors(
    conn: Connection,
    project_id: int,
    *,
    status: str | None,
    search: str | None,
    sort: str,
    after: Edge | None,
    before: Edge | None,
    limit: int,
    where: Sequence[ColumnElement[bool]] = (),
) -> list[ErrorRow]:
    """Up to ``limit`` errors in display order (newest first by ``sort``), of those
    matching every ``where`` condition (``errors_search.conditions``)."""
    col = SORT_COLUMNS[sort]
    query = select(*_ERROR_COLUMNS).where(errors.c.project_id == project_id, *where)
    if status is not None:
        query = query.where(errors.c.status == status)
    if search:
        pattern = "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        query = query.where(
            or_(
                errors.c.title.ilike(pattern, escape="\\"),
                errors.c.culprit.ilike(pattern, escape="\\"),
            )
        )
    if sort == "frequency":  # compare integers with integers, so the index applies
        after = (int(after[0]), after[1]) if after else None
        before = (int(before[0]), before[1]) if before else None
    rows = [_error(r) for r in conn.execute(_keyset(query, col, errors.c.id, after, before, limit))]
    return rows[::-1] if before is not None else rows


def unhandled_errors(conn: Connection, error_ids: Sequence[int]) -> set[int]:
    """Those of ``error_ids`` with an event whose exception reached no handler (the
    ``handled: no`` tag, error_tags' primary key)."""
    if not error_ids:
        return set()
    t = error_tags
    query = select(t.c.error_id).where(
        t.c.error_id.in_(list(error_ids)), t.c.key == "handled", t.c.value == "no"
    )
    return {int(i) for i in conn.execute(query).scalars()}


def assigned_errors(
    conn: Connection,
    user_id: int,
    *,
    status: str | None,
    min_level: int | None,
    after: Edge | None,
    before: Edge | None,
    limit: int,
) -> list[ErrorRow]:
    """Errors assigned to a user across projects, newest first (ix_errors_assignee); with
    ``min_level``, only in projects where they are still a member of that level."""
    query = select(*_ERROR_COLUMNS).where(errors.c.assignee_id == user_id)
    if status is not None:
        query = query.where(errors.c.status == status)
    if min_level is not None:
        visible = select(project_members.c.project_id).where(
            project_members.c.user_id == user_id,
            project_members.c.access_level >= min_level,
        )
        query = query.where(errors.c.project_id.in_(visible))
    hidden = select(projects.c.id).where(projects.c.monitor_access_level == "disabled")
    query = query.where(errors.c.project_id.not_in(hidden))
    keyset = _keyset(query, errors.c.last_seen, errors.c.id, after, before, limit)
    rows = [_error(r) for r in conn.execute(keyset)]
    return rows[::-1] if before is not None else rows


def get_error(conn: Connection, project_id: int, error_id: int) -> ErrorRow | None:
    query = select(*_ERROR_COLUMNS).where(
        errors.c.id == error_id, errors.c.project_id == project_id
    )
    row = conn.execute(query).first()
    return _error(row) if row else None


def project_of_error(conn: Connection, error_id: int) -> int | None:
    """The project of an error, or of the error it was merged into."""
    value = conn.execute(select(errors.c.project_id).where(errors.c.id == error_id)).scalar()
    if value is None:
        moved = select(error_redirects.c.project_id).where(error_redirects.c.error_id == error_id)
        value = conn.execute(moved).scalar()
    return int(value) if value is not None else None


def set_status(conn: Connection, project_id: int, error_id: int, status: str) -> bool:
    """Set the status; a manual change also clears the regression flag."""
    result = conn.execute(
        errors.update()
        .where(errors.c.id == error_id, errors.c.project_id == project_id)
        .values(status=status, regressed=False)
    )
    return result.rowcount > 0


def set_external_issue(conn: Connection, project_id: int, error_id: int, url: str | None) -> bool:
    """Link the error to an issue in an issue tracker (None: unlink)."""
    result = conn.execute(
        errors.update()
        .where(errors.c.id == error_id, errors.c.project_id == project_id)
        .values(external_issue_url=url)
    )
    return result.rowcount > 0


def hourly_counts(
    conn: Connection, error_ids: Sequence[int], *, first_hour: int, last_hour: int
) -> dict[int, dict[int, int]]:
    """Event counts per error and hour (unix seconds // 3600), one query for a page."""
    counts: dict[int, dict[int, int]] = defaultdict(dict)
    if not error_ids:
        return counts
    h = error_hourly
    query = select(h.c.error_id, h.c.hour, h.c.count).where(
        h.c.error_id.in_(list(error_ids)), h.c.hour >= first_hour, h.c.hour <= last_hour
    )
    for error_id, hour, count in conn.execute(query):
        counts[int(error_id)][int(hour)] = int(count)
    return counts


def list_events(
    conn: Connection,
    error_id: int,
    *,
    after: Edge | None,
    before: Edge | None,
    limit: int,
    environment: str | None = None,
) -> list[EventRow]:
    """An error's events, newest first (ix_events_error_time), of one environment if
    given (filtered along the same index)."""
    query = select(*EVENT_COLUMNS).where(events.c.error_id == error_id)
    if environment is not None:
        query = query.where(events.c.environment == environment)
    keyset = _keyset(query, events.c.timestamp, events.c.id, after, before, limit)
    find = dictionaries.lookup(conn)
    rows = [event_row(r, find) for r in conn.execute(keyset)]
    return rows[::-1] if before is not None else rows


def get_event(conn: Connection, error_id: int, event_id: str) -> EventRow | None:
    query = select(*EVENT_COLUMNS).where(
        events.c.error_id == error_id, events.c.event_id == event_id
    )
    row = conn.execute(query).first()
    return event_row(row, dictionaries.lookup(conn)) if row else None


@dataclass(frozen=True)
class TagCounts:
    key: str
    total: int  # events of the error that have this key
    top_values: list[tuple[str, int]]  # (value, events), most frequent first


def top_tags(conn: Connection, error_id: int, *, keys: int, values: int) -> list[TagCounts]:
    """The error's ``keys`` most frequent tag keys with their ``values`` most frequent
    values, over all its events (``error_tags``, counted by the digest): two queries on
    the error's rows of the primary key."""
    t = error_tags
    total = func.sum(t.c.count)
    totals = conn.execute(
        select(t.c.key, total)
        .where(t.c.error_id == error_id)
        .group_by(t.c.key)
        .order_by(total.desc(), t.c.key)
        .limit(keys)
    ).all()
    if not totals:
        return []
    rank = func.row_number().over(partition_by=t.c.key, order_by=(t.c.count.desc(), t.c.value))
    ranked = (
        select(t.c.key, t.c.value, t.c.count, rank.label("rank"))
        .where(t.c.error_id == error_id, t.c.key.in_([key for key, _ in totals]))
        .subquery()
    )
    top: dict[str, list[tuple[str, int]]] = defaultdict(list)
    query = (
        select(ranked.c.key, ranked.c.value, ranked.c.count)
        .where(ranked.c.rank <= values)
        .order_by(ranked.c.key, ranked.c.rank)
    )
    for key, value, count in conn.execute(query):
        top[key].append((value, int(count)))
    return [TagCounts(key, int(n), top[key]) for key, n in totals]


def environment_counts(conn: Connection, error_id: int, limit: int = 20) -> list[tuple[str, int]]:
    """Events per environment of one error, the most frequent first (error_tags)."""
    t = error_tags
    query = (
        select(t.c.value, t.c.count)
        .where(t.c.error_id == error_id, t.c.key == "environment")
        .order_by(t.c.count.desc(), t.c.value)
        .limit(limit)
    )
    return [(str(env), int(n)) for env, n in conn.execute(query)]
