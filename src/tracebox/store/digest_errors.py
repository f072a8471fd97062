"""Which error each event of a digest batch belongs to, and the error rows' update.

An event belongs to the error its first known hash answers to (``error_hashes``): the
current grouping version's hash, else the fallback hashes of older versions, in order.
An event found through a fallback hash maps its new hash to that error too, so an
error grouped by an older version keeps receiving its events. Events no hash answers
to get a new error, created from the batch's earliest event of that hash.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import (
    BigInteger,
    Connection,
    Float,
    String,
    Text,
    and_,
    bindparam,
    case,
    select,
)

from tracebox.store import error_hashes
from tracebox.store.bulk import (
    CHUNK,
    RowsInsert,
    SqliteStatement,
    json_recordset,
    json_rows,
    rows_matching,
)
from tracebox.store.error_hashes import ErrorIdCache
from tracebox.store.rows import PreparedEvent
from tracebox.store.tables import errors

Key = tuple[int, str]  # (project id, event id or hash)


def assign_errors(
    conn: Connection, batch: list[PreparedEvent], cache: ErrorIdCache
) -> tuple[dict[Key, int], set[int]]:
    """The error of each event, ``(project id, event id) -> error id``, and the ids of the
    errors created for hashes nothing answered to."""
    known = _known_hashes(conn, batch, cache)
    chosen: dict[Key, int] = {}
    missing: list[PreparedEvent] = []
    new_hashes: list[tuple[int, str, int]] = []
    for e in batch:
        # Most events' own hash is known: their candidates need no list.
        error_id = known.get((e.project_id, e.grouping_hash))
        if error_id is not None:
            chosen[(e.project_id, e.event_id)] = error_id
            continue
        error_id = next((known[key] for key in _candidates(e) if key in known), None)
        if error_id is None:
            missing.append(e)
            continue
        chosen[(e.project_id, e.event_id)] = error_id
        # Found by an older version's hash: the new hash answers to that error too.
        new_hashes.append((e.project_id, e.grouping_hash, error_id))
    ids, created = _create_errors(conn, missing) if missing else ({}, set())
    for e in missing:
        chosen[(e.project_id, e.event_id)] = ids[(e.project_id, e.grouping_hash)]
    error_hashes.add(conn, new_hashes + [(p, h, i) for (p, h), i in ids.items()])
    return chosen, created


def _candidates(e: PreparedEvent) -> list[Key]:
    return [(e.project_id, e.grouping_hash), *((e.project_id, h) for h in e.fallback_hashes)]


def _known_hashes(
    conn: Connection, batch: list[PreparedEvent], cache: ErrorIdCache
) -> dict[Key, int]:
    """The error of every hash the batch may use, from the cache or one lookup."""
    known: dict[Key, int] = {}
    wanted: set[Key] = set()
    for e in batch:
        hit = cache.get(e.project_id, e.grouping_hash)
        if hit is not None:  # the first hash found is the one used (most events)
            known[(e.project_id, e.grouping_hash)] = hit
            continue
        for key in _candidates(e):
            hit = cache.get(*key)
            if hit is not None:
                known[key] = hit
                if key[1] == e.grouping_hash:
                    break  # the first hash found is the one used
            else:
                wanted.add(key)
    found = error_hashes.lookup(conn, wanted - known.keys()) if wanted else {}
    for (project_id, hash_), error_id in found.items():
        cache.put(project_id, hash_, error_id)
    return known | found


def _create_errors(
    conn: Connection, missing: list[PreparedEvent]
) -> tuple[dict[Key, int], set[int]]:
    """Create an error per new ``(project, hash)`` from its earliest event (counts 0,
    updated below); return the ids of all of them, and the ids this transaction created.
    Another digest may create the same error at the same moment: the unique hash per
    project makes one row, both use it, only one says it created it."""
    first: dict[Key, PreparedEvent] = {}
    for e in sorted(missing, key=lambda e: e.timestamp):
        first.setdefault((e.project_id, e.grouping_hash), e)
    keys = sorted(first)
    rows = [_new_error_row(first[key]) for key in keys]
    inserted = _INSERT_ERRORS.insert_new(conn, rows)
    pair = (errors.c.project_id, errors.c.grouping_hash)
    ids = {(int(p), h): int(i) for p, h, i in rows_matching(conn, pair, keys, errors.c.id)}
    return ids, {ids[key] for key in inserted}


_NEW_ERROR_COLUMNS = (
    "project_id",
    "grouping_hash",
    "grouping_version",
    "fingerprint",
    "title",
    "type",
    "value",
    "culprit",
    "platform",
    "level",
    "status",
    "regressed",
    "first_seen",
    "last_seen",
    "first_release",
    "last_release",
    "events_count",
    "users_count",
    "last_event_id",
)
_INSERT_ERRORS = RowsInsert(
    errors,
    _NEW_ERROR_COLUMNS,
    ("project_id", "grouping_hash"),
    returning=("project_id", "grouping_hash"),
)


def _new_error_row(e: PreparedEvent) -> tuple[Any, ...]:
    """An error as its first event shows it (counts 0: ``update_errors`` adds them)."""
    return (
        e.project_id,
        e.grouping_hash,
        e.grouping_version,
        e.fingerprint,
        e.title,
        e.type,
        e.value,
        e.culprit,
        e.platform,
        e.level,
        "unresolved",
        False,
        e.timestamp,
        e.timestamp,
        e.release,
        e.release,
        0,
        0,
        e.event_id,
    )


def update_errors(
    conn: Connection, by_error: Mapping[int, list[PreparedEvent]], new_users: Mapping[int, int]
) -> None:
    """Add counts, move last_seen; status changes (regressions, ignore conditions) are
    ``workflow_digest``'s, right after. On PostgreSQL the rows are locked first, in id
    order, so the status read under that lock is the one the workflow step changes, even
    with other digests running."""
    ids = sorted(by_error)
    if conn.dialect.name == "postgresql":
        # SQLite needs no row lock: the write transaction (BEGIN IMMEDIATE) holds the
        # database's one write lock, so no other writer runs until the commit. Skipping
        # the SELECT saved ~5 us/event there.
        _lock_errors(conn, ids)
    rows = []
    for error_id in ids:
        batch = by_error[error_id]
        latest = max(batch, key=lambda e: e.timestamp)
        first_seen = min(e.timestamp for e in batch)
        rows.append(
            (
                error_id,
                len(batch),
                new_users.get(error_id, 0),
                first_seen,
                latest.timestamp,
                latest.release,
                latest.event_id,
                latest.title,
                latest.value,
                latest.culprit,
                latest.level,
            )
        )
    if conn.dialect.name == "postgresql":
        conn.execute(_UPDATE_POSTGRESQL, {"rows": _BATCH_JSON(rows)})
    else:
        _UPDATE_SQLITE.executemany(conn, rows)


def _lock_errors(conn: Connection, ids: list[int]) -> list[Key]:
    """``(id, status)`` of the errors, locked FOR NO KEY UPDATE in id order (PostgreSQL)."""
    out: list[Key] = []
    for start in range(0, len(ids), CHUNK):
        query = (
            select(errors.c.id, errors.c.status)
            .where(errors.c.id.in_(ids[start : start + CHUNK]))
            .order_by(errors.c.id)
            .with_for_update(key_share=True)
        )
        out += [(int(i), status) for i, status in conn.execute(query)]
    return out


# What a batch brings to one error (the columns of a row of ``update_errors``).
_BATCH: tuple[tuple[str, Any], ...] = (
    ("id", BigInteger()),
    ("n", BigInteger()),
    ("users", BigInteger()),
    ("first_ts", Float()),
    ("last_ts", Float()),
    ("release", String()),
    ("event", String()),
    ("title", Text()),
    ("value", Text()),
    ("culprit", Text()),
    ("level", String()),
)


def _error_update(b: Any) -> Any:
    """The UPDATE of one error from the batch's values ``b`` (bind parameters on SQLite,
    the columns of a ``json_recordset`` on PostgreSQL)."""
    newer = b["last_ts"] >= errors.c.last_seen
    return (
        errors.update()
        .where(errors.c.id == b["id"])
        .values(
            events_count=errors.c.events_count + b["n"],
            users_count=errors.c.users_count + b["users"],
            first_seen=case(
                (b["first_ts"] < errors.c.first_seen, b["first_ts"]), else_=errors.c.first_seen
            ),
            last_seen=case((newer, b["last_ts"]), else_=errors.c.last_seen),
            last_release=case(
                (and_(newer, b["release"].is_not(None)), b["release"]),
                else_=errors.c.last_release,
            ),
            last_event_id=case((newer, b["event"]), else_=errors.c.last_event_id),
            title=case((newer, b["title"]), else_=errors.c.title),
            value=case((newer, b["value"]), else_=errors.c.value),
            culprit=case((newer, b["culprit"]), else_=errors.c.culprit),
            level=case((newer, b["level"]), else_=errors.c.level),
        )
    )


_BATCH_JSON = json_rows([name for name, _ in _BATCH], [t for _, t in _BATCH])


_UPDATE_SQLITE = SqliteStatement(
    _error_update({name: bindparam(f"b_{name}", type_=t) for name, t in _BATCH}),
    [f"b_{name}" for name, _ in _BATCH],
)
_UPDATE_POSTGRESQL = _error_update(json_recordset(_BATCH).c)
