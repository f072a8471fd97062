"""The digest worker's batch write: everything one spool batch changes, in one transaction.

Contract: applying a batch twice changes nothing the second time for events (unique
``(project_id, event_id)``; counters add only rows really inserted), and the caller
commits the spool cursors in the same transaction, so no record is applied twice.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    Connection,
    Float,
    String,
    and_,
    bindparam,
    case,
    func,
    or_,
    select,
    tuple_,
)

from tracebox.store.dialect import insert
from tracebox.store.tables import (
    dropped_items,
    error_hourly,
    error_users,
    errors,
    events,
    projects,
    session_aggregates,
    sessions,
    spool_cursors,
)

TERMINAL_SESSION_STATES = ("exited", "crashed", "abnormal", "unhandled")


@dataclass(frozen=True)
class PreparedEvent:
    project_id: int
    event_id: str
    grouping_hash: str
    grouping_version: str
    fingerprint: str  # JSON list of grouping components
    title: str
    type: str
    value: str
    culprit: str
    platform: str
    level: str
    timestamp: float
    received: float
    environment: str | None
    release: str | None
    user_key: str | None
    payload: bytes  # compressed normalized event


@dataclass
class BatchResult:
    events_inserted: int = 0
    events_duplicate: int = 0
    errors_created: int = 0
    errors_regressed: int = 0
    invalid: dict[str, int] = field(default_factory=dict)  # records set aside, by reason


def write_events(conn: Connection, prepared: Sequence[PreparedEvent]) -> BatchResult:
    """Group, insert and count a batch of events. Call inside a write transaction."""
    result = BatchResult()
    unique = list({(e.project_id, e.event_id): e for e in prepared}.values())
    if not unique:
        return result
    error_ids, result.errors_created = _ensure_errors(conn, unique)
    inserted = _insert_events(conn, unique, error_ids)
    result.events_inserted = len(inserted)
    result.events_duplicate = len(prepared) - len(inserted)
    if inserted:
        by_error: dict[int, list[PreparedEvent]] = defaultdict(list)
        for e in inserted:
            by_error[error_ids[(e.project_id, e.grouping_hash)]].append(e)
        new_users = _insert_users(conn, by_error)
        _add_hourly(conn, by_error)
        result.errors_regressed = _update_errors(conn, by_error, new_users)
    return result


def _ensure_errors(
    conn: Connection, batch: Sequence[PreparedEvent]
) -> tuple[dict[tuple[int, str], int], int]:
    """Create missing errors (counts 0; updated below) and map (project, hash) -> error id."""
    first: dict[tuple[int, str], PreparedEvent] = {}
    for e in sorted(batch, key=lambda e: e.timestamp):
        first.setdefault((e.project_id, e.grouping_hash), e)
    keys = list(first)
    existing = _error_ids(conn, keys)
    missing = [first[k] for k in keys if k not in existing]
    if missing:
        rows = [_new_error_row(e) for e in missing]
        stmt = insert(conn, errors).on_conflict_do_nothing(
            index_elements=["project_id", "grouping_hash"]
        )
        conn.execute(stmt, rows)
        existing = _error_ids(conn, keys)
    return existing, len(missing)


def _error_ids(conn: Connection, keys: list[tuple[int, str]]) -> dict[tuple[int, str], int]:
    found: dict[tuple[int, str], int] = {}
    for chunk in _chunks(keys, 400):
        query = select(errors.c.project_id, errors.c.grouping_hash, errors.c.id).where(
            tuple_(errors.c.project_id, errors.c.grouping_hash).in_(chunk)
        )
        for project_id, grouping_hash, error_id in conn.execute(query):
            found[(project_id, grouping_hash)] = error_id
    return found


def _new_error_row(e: PreparedEvent) -> dict[str, Any]:
    return {
        "project_id": e.project_id,
        "grouping_hash": e.grouping_hash,
        "grouping_version": e.grouping_version,
        "fingerprint": e.fingerprint,
        "title": e.title,
        "type": e.type,
        "value": e.value,
        "culprit": e.culprit,
        "platform": e.platform,
        "level": e.level,
        "status": "unresolved",
        "regressed": False,
        "first_seen": e.timestamp,
        "last_seen": e.timestamp,
        "first_release": e.release,
        "last_release": e.release,
        "events_count": 0,
        "users_count": 0,
        "last_event_id": e.event_id,
    }


def _insert_events(
    conn: Connection, batch: Sequence[PreparedEvent], error_ids: Mapping[tuple[int, str], int]
) -> list[PreparedEvent]:
    """Insert events that are new; return exactly those (duplicates are skipped)."""
    rows = [
        {
            "project_id": e.project_id,
            "error_id": error_ids[(e.project_id, e.grouping_hash)],
            "event_id": e.event_id,
            "timestamp": e.timestamp,
            "received_at": e.received,
            "level": e.level,
            "environment": e.environment,
            "release": e.release,
            "user_key": e.user_key,
            "payload": e.payload,
        }
        for e in batch
    ]
    stmt = (
        insert(conn, events)
        .on_conflict_do_nothing(index_elements=["project_id", "event_id"])
        .returning(events.c.project_id, events.c.event_id, sort_by_parameter_order=True)
    )
    done = {(p, ev) for p, ev in conn.execute(stmt, rows)}
    return [e for e in batch if (e.project_id, e.event_id) in done]


def _insert_users(conn: Connection, by_error: Mapping[int, list[PreparedEvent]]) -> dict[int, int]:
    """Record distinct users per error; return how many were new per error."""
    rows = list(
        {
            (error_id, e.user_key)
            for error_id, batch in by_error.items()
            for e in batch
            if e.user_key
        }
    )
    if not rows:
        return {}
    stmt = (
        insert(conn, error_users)
        .on_conflict_do_nothing(index_elements=["error_id", "user_key"])
        .returning(error_users.c.error_id, sort_by_parameter_order=True)
    )
    counts: dict[int, int] = defaultdict(int)
    for (error_id,) in conn.execute(stmt, [{"error_id": e, "user_key": u} for e, u in rows]):
        counts[error_id] += 1
    return counts


def _add_hourly(conn: Connection, by_error: Mapping[int, list[PreparedEvent]]) -> None:
    counts: dict[tuple[int, int], int] = defaultdict(int)
    for error_id, batch in by_error.items():
        for e in batch:
            counts[(error_id, int(e.timestamp // 3600))] += 1
    stmt = insert(conn, error_hourly)
    stmt = stmt.on_conflict_do_update(
        index_elements=["error_id", "hour"],
        set_={"count": error_hourly.c.count + stmt.excluded.count},
    )
    conn.execute(stmt, [{"error_id": e, "hour": h, "count": n} for (e, h), n in counts.items()])


def _update_errors(
    conn: Connection, by_error: Mapping[int, list[PreparedEvent]], new_users: Mapping[int, int]
) -> int:
    """Add counts, move last_seen, reopen resolved errors (regression). Returns regressions."""
    ids = list(by_error)
    resolved = {
        row[0]
        for chunk in _chunks(ids, 400)
        for row in conn.execute(
            select(errors.c.id).where(errors.c.id.in_(chunk), errors.c.status == "resolved")
        )
    }
    params = []
    for error_id, batch in by_error.items():
        latest = max(batch, key=lambda e: e.timestamp)
        params.append(
            {
                "b_id": error_id,
                "b_n": len(batch),
                "b_users": new_users.get(error_id, 0),
                "b_first": min(e.timestamp for e in batch),
                "b_last": latest.timestamp,
                "b_release": latest.release,
                "b_event": latest.event_id,
                "b_title": latest.title,
                "b_value": latest.value,
                "b_culprit": latest.culprit,
                "b_level": latest.level,
            }
        )
    # Typed bind parameters: PostgreSQL cannot infer a type for "$n IS NOT NULL" alone.
    b_last, b_first = bindparam("b_last", type_=Float), bindparam("b_first", type_=Float)
    b_release = bindparam("b_release", type_=String)
    newer = b_last >= errors.c.last_seen
    stmt = (
        errors.update()
        .where(errors.c.id == bindparam("b_id"))
        .values(
            events_count=errors.c.events_count + bindparam("b_n"),
            users_count=errors.c.users_count + bindparam("b_users"),
            first_seen=case(
                (b_first < errors.c.first_seen, b_first),
                else_=errors.c.first_seen,
            ),
            last_seen=case((newer, b_last), else_=errors.c.last_seen),
            last_release=case(
                (and_(newer, b_release.is_not(None)), b_release),
                else_=errors.c.last_release,
            ),
            last_event_id=case((newer, bindparam("b_event")), else_=errors.c.last_event_id),
            title=case((newer, bindparam("b_title")), else_=errors.c.title),
            value=case((newer, bindparam("b_value")), else_=errors.c.value),
            culprit=case((newer, bindparam("b_culprit")), else_=errors.c.culprit),
            level=case((newer, bindparam("b_level")), else_=errors.c.level),
            regressed=case((errors.c.status == "resolved", True), else_=errors.c.regressed),
            status=case((errors.c.status == "resolved", "unresolved"), else_=errors.c.status),
        )
    )
    conn.execute(stmt, params)
    return len(resolved)


def write_sessions(conn: Connection, project_id: int, updates: Iterable[Mapping[str, Any]]) -> None:
    """Upsert session updates by sid, keeping the highest seq; a terminal state sticks."""
    rows = [{"project_id": project_id, **_session_row(u)} for u in updates]
    if not rows:
        return
    stmt = insert(conn, sessions)
    ex = stmt.excluded
    # Not IN (...): an expanding parameter cannot run as executemany.
    terminal = or_(*(sessions.c.status == state for state in TERMINAL_SESSION_STATES))
    changed = ("seq", "status", "errors", "duration", "timestamp")
    stmt = stmt.on_conflict_do_update(
        index_elements=["project_id", "sid"],
        # A user id often arrives with a later update (setUser after init): keep it.
        set_={**{c: getattr(ex, c) for c in changed}, "did": func.coalesce(ex.did, sessions.c.did)},
        where=and_(ex.seq >= sessions.c.seq, ~terminal),
    )
    conn.execute(stmt, rows)


def _session_row(u: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("sid", "did", "release", "environment", "started", "timestamp", "seq", "status")
    row = {k: u[k] for k in keys}
    row["errors"] = u["errors"]
    row["duration"] = u.get("duration")
    return row


def write_session_aggregates(
    conn: Connection, project_id: int, aggregates: Iterable[Mapping[str, Any]]
) -> None:
    rows = [{"project_id": project_id, **dict(a)} for a in aggregates]
    if rows:
        conn.execute(session_aggregates.insert(), rows)


def add_dropped(conn: Connection, counts: Mapping[tuple[int, str], int]) -> None:
    """Count accepted-but-not-stored items per project and item type."""
    if not counts:
        return
    stmt = insert(conn, dropped_items)
    stmt = stmt.on_conflict_do_update(
        index_elements=["project_id", "item_type"],
        set_={"count": dropped_items.c.count + stmt.excluded.count},
    )
    rows = [{"project_id": p, "item_type": t, "count": n} for (p, t), n in counts.items()]
    conn.execute(stmt, rows)


def project_exists(conn: Connection, project_id: int) -> bool:
    query = select(projects.c.id).where(projects.c.id == project_id)
    return conn.execute(query).first() is not None


def load_cursors(conn: Connection) -> dict[str, int]:
    return {
        s: p for s, p in conn.execute(select(spool_cursors.c.segment, spool_cursors.c.position))
    }


def save_cursors(conn: Connection, positions: Mapping[str, int]) -> None:
    if not positions:
        return
    stmt = insert(conn, spool_cursors)
    stmt = stmt.on_conflict_do_update(
        index_elements=["segment"], set_={"position": stmt.excluded.position}
    )
    conn.execute(stmt, [{"segment": s, "position": p} for s, p in positions.items()])


def forget_cursors(conn: Connection, segments: Sequence[str]) -> None:
    for chunk in _chunks(list(segments), 400):
        conn.execute(spool_cursors.delete().where(spool_cursors.c.segment.in_(chunk)))


def count_events(conn: Connection) -> int:
    return int(conn.execute(select(func.count()).select_from(events)).scalar_one())


def _chunks(items: list[Any], size: int) -> Iterable[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
