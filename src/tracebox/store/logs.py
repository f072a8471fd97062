"""Structured log records (docs/sdk-data.md "Logs"): written by the digest, searched by
the logs page, shown beside the error events that share their trace.

``log_hourly`` counts records and bytes per project and hour of the records' time, in
the same transactions that add and remove records: the volume chart, the usage figures
and the project's cap read it instead of scanning the logs. Every removal goes through
``_remove``, which keeps it exact.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import orjson
from sqlalchemy import Connection, Row, func, literal, or_, select, tuple_

from tracebox.store.dialect import insert
from tracebox.store.rows import NewLog
from tracebox.store.tables import log_hourly, logs

AnyRow: TypeAlias = Row[*tuple[Any, ...]]
Edge = tuple[float, int]  # (timestamp, id): keyset position in the newest-first search
Removed = tuple[int, int]  # (records, bytes)


@dataclass(frozen=True)
class LogRow:
    id: int
    timestamp: float
    level: str
    severity_number: int | None
    body: str
    trace_id: str | None
    span_id: str | None
    release: str | None
    environment: str | None
    logger: str | None
    attributes: dict[str, Any]


_COLUMNS = (
    logs.c.id, logs.c.timestamp, logs.c.level, logs.c.severity_number, logs.c.body,
    logs.c.trace_id, logs.c.span_id, logs.c.release, logs.c.environment, logs.c.logger,
    logs.c.attributes,
)  # fmt: skip


def _row(row: AnyRow) -> LogRow:
    attributes = orjson.loads(row.attributes) if row.attributes else {}
    return LogRow(
        id=row.id,
        timestamp=row.timestamp,
        level=row.level,
        severity_number=row.severity_number,
        body=row.body,
        trace_id=row.trace_id,
        span_id=row.span_id,
        release=row.release,
        environment=row.environment,
        logger=row.logger,
        attributes=attributes if isinstance(attributes, dict) else {},
    )


def write(conn: Connection, new: Sequence[NewLog]) -> None:
    if not new:
        return
    conn.execute(logs.insert(), [dict(n.__dict__) for n in new])
    hours: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    for n in new:
        counts = hours[(n.project_id, int(n.timestamp // 3600))]
        counts[0] += 1
        counts[1] += n.size
    _add_hourly(conn, {key: (c, b) for key, (c, b) in hours.items()})


def _add_hourly(conn: Connection, deltas: dict[tuple[int, int], tuple[int, int]]) -> None:
    rows = [
        {"project_id": p, "hour": h, "count": c, "bytes": b}
        for (p, h), (c, b) in sorted(deltas.items())
    ]
    stmt = insert(conn, log_hourly)
    stmt = stmt.on_conflict_do_update(
        index_elements=["project_id", "hour"],
        set_={
            "count": log_hourly.c.count + stmt.excluded.count,
            "bytes": log_hourly.c.bytes + stmt.excluded.bytes,
        },
    )
    conn.execute(stmt, rows)
    emptied = log_hourly.delete().where(log_hourly.c.count <= 0)
    if any(c < 0 for c, _ in deltas.values()):
        conn.execute(emptied.where(log_hourly.c.project_id.in_({p for p, _ in deltas})))


def usage(conn: Connection, project_id: int) -> tuple[int, int]:
    """(records, bytes) the project stores (log_hourly's key)."""
    query = select(
        func.coalesce(func.sum(log_hourly.c.count), 0),
        func.coalesce(func.sum(log_hourly.c.bytes), 0),
    ).where(log_hourly.c.project_id == project_id)
    count, size = conn.execute(query).one()
    return int(count), int(size)


def hourly(conn: Connection, project_id: int, *, first_hour: int, last_hour: int) -> dict[int, int]:
    """Records per hour (unix seconds // 3600) in the range, for the volume chart."""
    t = log_hourly.c
    query = select(t.hour, t.count).where(
        t.project_id == project_id, t.hour >= first_hour, t.hour <= last_hour
    )
    return {int(h): int(n) for h, n in conn.execute(query)}


def search(
    conn: Connection,
    project_id: int,
    *,
    levels: Collection[str] = (),
    text: str | None = None,
    trace_id: str | None = None,
    since: float | None = None,
    until: float | None = None,
    after: Edge | None = None,
    limit: int,
) -> list[LogRow]:
    """Up to ``limit`` records, newest first, after the keyset position ``after``:
    of the given levels (any when empty), whose body or logger contains ``text`` (any
    case), of one trace, at or after ``since`` and before ``until``
    (ix_logs_project_time; ix_logs_trace for a trace)."""
    c = logs.c
    query = select(*_COLUMNS).where(c.project_id == project_id)
    if trace_id:
        query = query.where(c.trace_id == trace_id)
    if levels:
        query = query.where(c.level.in_(sorted(levels)))
    if text:
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        query = query.where(
            or_(c.body.ilike(pattern, escape="\\"), c.logger.ilike(pattern, escape="\\"))
        )
    if since is not None:
        query = query.where(c.timestamp >= since)
    if until is not None:
        query = query.where(c.timestamp < until)
    if after is not None:
        query = query.where(
            tuple_(c.timestamp, c.id) < tuple_(literal(after[0]), literal(after[1]))
        )
    query = query.order_by(c.timestamp.desc(), c.id.desc()).limit(limit)
    return [_row(row) for row in conn.execute(query)]


def for_trace(conn: Connection, project_id: int, trace_id: str, limit: int) -> list[LogRow]:
    """The records of one trace, oldest first (ix_logs_trace)."""
    query = (
        select(*_COLUMNS)
        .where(logs.c.project_id == project_id, logs.c.trace_id == trace_id)
        .order_by(logs.c.timestamp, logs.c.id)
        .limit(limit)
    )
    return [_row(row) for row in conn.execute(query)]


def trim(
    conn: Connection, project_id: int, *, before: float, max_bytes: int, limit: int
) -> Removed:
    """Keep the project within its bounds, removing at most ``limit`` records: those
    older than ``before`` (retention), then the oldest while it holds more than
    ``max_bytes``. Called by the digest after it writes a project's logs."""
    removed = delete_older_than(conn, project_id, before, limit)
    excess = usage(conn, project_id)[1] - max_bytes
    left = limit - removed[0]
    while excess > 0 and left > 0:
        rows = _oldest(conn, project_id, min(left, 500))
        if not rows:
            break
        taken = []
        for row in rows:
            taken.append(row)
            excess -= int(row.size)
            if excess <= 0:
                break
        step = _remove(conn, taken)
        removed = (removed[0] + step[0], removed[1] + step[1])
        left -= step[0]
    return removed


def delete_older_than(conn: Connection, project_id: int, before: float, limit: int) -> Removed:
    """Remove up to ``limit`` of the project's records older than ``before``, oldest first."""
    query = (
        select(logs.c.id, logs.c.project_id, logs.c.timestamp, logs.c.size)
        .where(logs.c.project_id == project_id, logs.c.timestamp < before)
        .order_by(logs.c.timestamp, logs.c.id)
        .limit(limit)
    )
    return _remove(conn, conn.execute(query).all())


def oldest(conn: Connection) -> float | None:
    """The time of the instance's oldest record (for a disk budget)."""
    found = conn.execute(select(func.min(logs.c.timestamp))).scalar()
    return float(found) if found is not None else None


def remove_oldest(conn: Connection, limit: int) -> dict[int, Removed]:
    """Remove the instance's ``limit`` oldest records; what went, per project."""
    query = (
        select(logs.c.id, logs.c.project_id, logs.c.timestamp, logs.c.size)
        .order_by(logs.c.timestamp, logs.c.id)
        .limit(limit)
    )
    rows = conn.execute(query).all()
    per_project: dict[int, list[AnyRow]] = defaultdict(list)
    for row in rows:
        per_project[int(row.project_id)].append(row)
    return {p: _remove(conn, found) for p, found in per_project.items()}


def _oldest(conn: Connection, project_id: int, limit: int) -> Sequence[AnyRow]:
    query = (
        select(logs.c.id, logs.c.project_id, logs.c.timestamp, logs.c.size)
        .where(logs.c.project_id == project_id)
        .order_by(logs.c.timestamp, logs.c.id)
        .limit(limit)
    )
    return conn.execute(query).all()


def _remove(conn: Connection, rows: Sequence[AnyRow]) -> Removed:
    """Delete these records (id, project_id, timestamp, size) and uncount them."""
    if not rows:
        return 0, 0
    ids = [row.id for row in rows]
    for start in range(0, len(ids), 500):
        conn.execute(logs.delete().where(logs.c.id.in_(ids[start : start + 500])))
    deltas: dict[tuple[int, int], tuple[int, int]] = {}
    for row in rows:
        key = (int(row.project_id), int(row.timestamp // 3600))
        count, size = deltas.get(key, (0, 0))
        deltas[key] = (count - 1, size - int(row.size))
    _add_hourly(conn, deltas)
    return len(rows), sum(int(row.size) for row in rows)
