"""The digest worker's batch write: everything one spool batch changes, in one transaction.

Contract: applying a batch twice changes nothing the second time for events (unique
``(project_id, event_id)``; counters add only rows really inserted), and the caller
commits the spool cursors (``store.cursors``) in the same transaction, so no record is
applied twice.

Set-based: each table gets one statement per batch (a multi-row insert or an
executemany), never one per event, and no query runs per event. Rows are written in key
order, and the errors of a batch are locked in id order before they are updated, so two
digests on one PostgreSQL (two nodes) take shared rows (errors, hourly counts, tags) in
the same order and cannot deadlock; the statements touching those shared rows come last,
right before the commit, to hold their locks briefly.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from typing import Any

from sqlalchemy import (
    Connection,
    and_,
    case,
    func,
    or_,
    select,
)

from tracebox.store import usage, workflow_digest
from tracebox.store.bulk import RowsInsert, rows_matching
from tracebox.store.dialect import insert
from tracebox.store.digest_errors import assign_errors, update_errors
from tracebox.store.error_hashes import ErrorIdCache
from tracebox.store.rows import PreparedEvent as PreparedEvent
from tracebox.store.tables import (
    dropped_items,
    error_hourly,
    error_tags,
    error_users,
    events,
    projects,
    session_aggregates,
    sessions,
)
from tracebox.store.workflow_digest import WorkflowOutcome

TERMINAL_SESSION_STATES = ("exited", "crashed", "abnormal", "unhandled")


@dataclass(frozen=True)
class ErrorEvent:
    """An error a batch created or reopened, and the event of the batch that did it."""

    error_id: int
    project_id: int
    event_id: str


@dataclass(frozen=True)
class ErrorCounts:
    """What a batch added to one error."""

    events: int  # events stored
    new_users: int  # users the error had not seen before


@dataclass
class BatchResult:
    events_inserted: int = 0
    events_duplicate: int = 0
    created: list[ErrorEvent] = field(default_factory=list)
    regressed: list[ErrorEvent] = field(default_factory=list)  # resolved, reopened
    counts: dict[int, ErrorCounts] = field(default_factory=dict)  # per error id
    invalid: dict[str, int] = field(default_factory=dict)  # records set aside, by reason
    workflow: WorkflowOutcome = field(default_factory=WorkflowOutcome)
    # The events stored, per error id: alert rules (issue 14) read their summaries.
    by_error: dict[int, list[PreparedEvent]] = field(default_factory=dict)

    @property
    def errors_created(self) -> int:
        return len(self.created)

    @property
    def errors_regressed(self) -> int:
        return len(self.regressed)


def write_events(
    conn: Connection, prepared: Sequence[PreparedEvent], cache: ErrorIdCache | None = None
) -> BatchResult:
    """Group, insert and count a batch of events. Call inside a write transaction.

    ``cache`` is the digest process's cache of hash -> error id (a fresh one if None).
    """
    result = BatchResult(events_duplicate=len(prepared))
    unique = list({(e.project_id, e.event_id): e for e in prepared}.values())
    batch = _not_stored(conn, unique)
    if not batch:
        return result
    cache = cache if cache is not None else ErrorIdCache()
    cache.refresh(conn, {e.project_id for e in batch})
    error_ids, created = assign_errors(conn, batch, cache)
    by_error: dict[int, list[PreparedEvent]] = defaultdict(list)
    for e in _insert_events(conn, batch, error_ids):
        by_error[error_ids[e.project_id, e.event_id]].append(e)
    inserted = sum(len(evs) for evs in by_error.values())
    result.events_inserted, result.events_duplicate = inserted, len(prepared) - inserted
    stored = [(e.project_id, e.received, len(e.payload)) for evs in by_error.values() for e in evs]
    usage.events_stored(conn, stored)  # storage_usage, usage_hourly: the usage view
    if not by_error:
        return result
    new_users = _insert_users(conn, by_error)
    _add_hourly(conn, by_error)
    _add_tags(conn, by_error)
    update_errors(conn, by_error, new_users)
    # Regressions by Sentry's release rules, ignore conditions, "for review" (issue 15).
    result.workflow = workflow_digest.apply(conn, by_error, time.time(), created=set(created))
    result.created = [_first(i, by_error[i]) for i in sorted(created) if i in by_error]
    result.regressed = [
        ErrorEvent(i, by_error[i][0].project_id, event_id)
        for i, event_id in sorted(result.workflow.regressed.items())
    ]
    result.counts = {
        i: ErrorCounts(len(evs), new_users.get(i, 0)) for i, evs in sorted(by_error.items())
    }
    result.by_error = by_error
    return result


def _first(error_id: int, batch: list[PreparedEvent]) -> ErrorEvent:
    return ErrorEvent(error_id, batch[0].project_id, batch[0].event_id)


def _not_stored(conn: Connection, batch: list[PreparedEvent]) -> list[PreparedEvent]:
    """The events of ``batch`` not in the events table yet."""
    keys = sorted((e.project_id, e.event_id) for e in batch)
    pair = (events.c.project_id, events.c.event_id)
    stored = {(p, i) for p, i in rows_matching(conn, pair, keys)}
    return [e for e in batch if (e.project_id, e.event_id) not in stored]


_EVENT_COLUMNS = (  # in the table's order: the rows go to sqlite3 as they are
    "project_id",
    "error_id",
    "event_id",
    "timestamp",
    "received_at",
    "level",
    "environment",
    "release",
    "user_key",
    "payload",
)
_INSERT_EVENTS = RowsInsert(
    events, _EVENT_COLUMNS, ("project_id", "event_id"), returning=("project_id", "event_id")
)
_INSERT_USERS = RowsInsert(
    error_users,
    ("error_id", "user_key"),
    ("error_id", "user_key"),
    returning=("error_id", "user_key"),
)
_ADD_HOURLY = RowsInsert(
    error_hourly,
    ("error_id", "hour", "count"),
    ("error_id", "hour"),
    update=lambda excluded: {"count": error_hourly.c.count + excluded.count},
)
_ADD_TAGS = RowsInsert(
    error_tags,
    ("project_id", "error_id", "key", "value", "count", "last_seen"),
    ("error_id", "key", "value"),
    update=lambda excluded: {
        "count": error_tags.c.count + excluded.count,
        "last_seen": case(
            (excluded.last_seen > error_tags.c.last_seen, excluded.last_seen),
            else_=error_tags.c.last_seen,
        ),
    },
)


def _insert_events(
    conn: Connection, batch: list[PreparedEvent], error_ids: Mapping[tuple[int, str], int]
) -> list[PreparedEvent]:
    """Insert the batch (found not stored yet); return the events really inserted, in
    batch order."""
    rows = sorted(
        (
            (
                e.project_id,
                error_ids[(e.project_id, e.event_id)],
                e.event_id,
                e.timestamp,
                e.received,
                e.level,
                e.environment,
                e.release,
                e.user_key,
                e.payload,
            )
            for e in batch
        ),
        key=lambda row: (row[0], row[2]),  # (project_id, event_id): the unique key
    )
    done = _INSERT_EVENTS.insert_new(conn, rows, known_new=True)
    return [e for e in batch if (e.project_id, e.event_id) in done]


def _insert_users(conn: Connection, by_error: Mapping[int, list[PreparedEvent]]) -> dict[int, int]:
    """Record distinct users per error; return how many were new per error."""
    pairs = sorted(
        {(error_id, e.user_key) for error_id, b in by_error.items() for e in b if e.user_key}
    )
    counts: dict[int, int] = defaultdict(int)
    for error_id, _ in _INSERT_USERS.insert_new(conn, pairs):
        counts[error_id] += 1
    return counts


def _add_hourly(conn: Connection, by_error: Mapping[int, list[PreparedEvent]]) -> None:
    counts: dict[tuple[int, int], int] = defaultdict(int)
    for error_id, batch in by_error.items():
        for e in batch:
            counts[(error_id, int(e.timestamp // 3600))] += 1
    _ADD_HOURLY.execute(conn, [(e, h, n) for (e, h), n in sorted(counts.items())])


def _add_tags(conn: Connection, by_error: Mapping[int, list[PreparedEvent]]) -> None:
    """Count each event's tags on its error (the details page's top tags, search).

    Per error, the events' own ``(key, value)`` tuples are counted as they are (no new
    key or mutable entry per tag: a batch has thousands, and allocating them made the
    garbage collector cost more than the counting), and the latest timestamp of a tag
    is the last one a dict keeps when the events go oldest first."""
    rows: list[tuple[Any, ...]] = []
    for error_id in sorted(by_error):
        batch = by_error[error_id]
        if len(batch) == 1 and len(set(batch[0].tags)) == len(batch[0].tags):
            # Most errors have one event in a batch: its tags, each once, count 1.
            e = batch[0]
            rows += [(e.project_id, error_id, k, v, 1, e.timestamp) for k, v in sorted(e.tags)]
            continue
        if len(batch) > 1:
            batch = sorted(batch, key=_timestamp)
        counts = Counter(chain.from_iterable([e.tags for e in batch]))
        last_seen = {tag: e.timestamp for e in batch for tag in e.tags}
        project_id = batch[0].project_id
        rows += [
            (project_id, error_id, key, value, n, last_seen[key, value])
            for (key, value), n in sorted(counts.items())
        ]
    _ADD_TAGS.execute(conn, rows)


_timestamp = attrgetter("timestamp")


def write_sessions(conn: Connection, project_id: int, updates: Iterable[Mapping[str, Any]]) -> None:
    """Upsert session updates by sid, keeping the highest seq; a terminal state sticks.

    Several updates of one session (its start and its end often share a batch) are
    applied in their order, as one by one: the n-th update of every session goes in the
    n-th statement (PostgreSQL refuses to upsert one row twice in one statement).
    """
    rounds: list[list[dict[str, Any]]] = []
    seen: dict[str, int] = defaultdict(int)
    for u in updates:
        row = {"project_id": project_id, **_session_row(u)}
        n = seen[row["sid"]]
        seen[row["sid"]] += 1
        if n == len(rounds):
            rounds.append([])
        rounds[n].append(row)
    for rows in rounds:
        conn.execute(_upsert_sessions(conn), sorted(rows, key=lambda row: row["sid"]))


def _upsert_sessions(conn: Connection) -> Any:
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
    return stmt


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
    rows = [{"project_id": p, "item_type": t, "count": n} for (p, t), n in sorted(counts.items())]
    conn.execute(stmt, rows)


def project_exists(conn: Connection, project_id: int) -> bool:
    query = select(projects.c.id).where(projects.c.id == project_id)
    return conn.execute(query).first() is not None


def _chunks(items: list[Any], size: int) -> Iterable[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
