"""Which error each event of a digest batch belongs to, and the error rows' update.

An event belongs to the error its first known hash answers to (``error_hashes``): the
current grouping version's hash, else the fallback hashes of older versions, in order.
An event found through a fallback hash maps its new hash to that error too, so an
error grouped by an older version keeps receiving its events. Events no hash answers
to get a new error, created from the batch's earliest event of that hash.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Float, String, and_, bindparam, case, select

from tracebox.store import error_hashes
from tracebox.store.bulk import CHUNK, insert_new, rows_matching
from tracebox.store.error_hashes import ErrorIdCache
from tracebox.store.tables import errors

if TYPE_CHECKING:
    from tracebox.store.digest import PreparedEvent

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
        error_id = next((known[key] for key in _candidates(e) if key in known), None)
        if error_id is None:
            missing.append(e)
            continue
        chosen[(e.project_id, e.event_id)] = error_id
        if (e.project_id, e.grouping_hash) not in known:
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
    inserted = insert_new(conn, errors, rows, ("project_id", "grouping_hash"))
    pair = (errors.c.project_id, errors.c.grouping_hash)
    ids = {(int(p), h): int(i) for p, h, i in rows_matching(conn, pair, keys, errors.c.id)}
    return ids, {ids[key] for key in inserted}


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


def update_errors(
    conn: Connection, by_error: Mapping[int, list[PreparedEvent]], new_users: Mapping[int, int]
) -> list[int]:
    """Add counts, move last_seen, reopen resolved errors (regression). Returns the ids
    of the errors reopened. The rows are locked first, in id order: the status read
    under that lock is the one the update changes, even with other digests running."""
    ids = sorted(by_error)
    resolved = [i for i, status in _lock_errors(conn, ids) if status == "resolved"]
    params = []
    for error_id in ids:
        batch = by_error[error_id]
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
    conn.execute(_UPDATE_ERROR, params)
    return resolved


def _lock_errors(conn: Connection, ids: list[int]) -> list[Key]:
    """``(id, status)`` of the errors, locked (FOR NO KEY UPDATE on PostgreSQL) in id order."""
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


def _update_error_statement() -> Any:
    # Typed bind parameters: PostgreSQL cannot infer a type for "$n IS NOT NULL" alone.
    b_last, b_first = bindparam("b_last", type_=Float), bindparam("b_first", type_=Float)
    b_release = bindparam("b_release", type_=String)
    newer = b_last >= errors.c.last_seen
    return (
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


_UPDATE_ERROR = _update_error_statement()
