"""Merge errors into one, and unmerge a fingerprint back out (``IntegratedSource``).

Merge: the error with the most events absorbs the others (Sentry's choice): their
events, counts, users, tags, hashes and history move to it, in batches of sources per
transaction; future events of any of their fingerprints go to it.

Unmerge: the events whose grouping (the current hash or an older version's) is the
fingerprint move to a new error, found by recomputing each stored event's grouping
(pure, the digest's own ``grouping.calculate``), so nothing per event had to be kept
at merge time; future events of that fingerprint go to the new error.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

import orjson
from sqlalchemy import Connection

from tracebox import grouping
from tracebox.errors import InvalidParameter, NotFound
from tracebox.protocol.event import summarize
from tracebox.protocol.tags import event_tags
from tracebox.store import Database, activity, errors_read
from tracebox.store import merge as store
from tracebox.store.error_hashes import bump_epoch
from tracebox.store.errors_read import ErrorRow, EventRow
from tracebox.store.triage import assign, chunks
from tracebox.tracking.models import ActivityKind, UserRef

SCAN_BATCH = 1000  # events decoded per read while looking for a fingerprint's events


def merge(
    db: Database,
    project_id: int,
    ids: Sequence[int],
    actor: UserRef | None,
    *,
    max_errors: int,
    batch_size: int,
) -> int:
    """Merge the errors ``ids``; return the id of the one they became."""
    wanted = sorted(set(ids))
    if len(wanted) < 2:
        raise InvalidParameter("ids: merging needs at least two errors")
    if len(wanted) > max_errors:
        raise InvalidParameter(f"ids: at most {max_errors} errors at once")
    with db.read() as conn:
        found = store.members(conn, project_id, wanted)
    if len(found) != len(wanted):
        raise NotFound("Error")
    target = max(found, key=lambda m: (m.events_count, -m.id))
    sources = [m for m in found if m.id != target.id]
    assignee = target.assignee_id or next((m.assignee_id for m in sources if m.assignee_id), None)
    for chunk in chunks([m.id for m in sources], batch_size):
        with db.write() as conn:
            _merge_batch(conn, project_id, target.id, chunk, actor)
            if assignee and not target.assignee_id:
                assign(conn, project_id, [target.id], assignee)
    return target.id


def _merge_batch(
    conn: Connection, project_id: int, target: int, sources: list[int], actor: UserRef | None
) -> None:
    bump_epoch(conn, project_id)  # first: digests drop their cached hash -> error ids
    if len(store.members(conn, project_id, [target, *sources], lock=True)) != len(sources) + 1:
        raise NotFound("Error")  # one of them was merged or deleted meanwhile
    activity.move(conn, sources, target)
    store.merge_into(conn, project_id, target, sources)
    activity.add(
        conn,
        project_id,
        [target],
        ActivityKind.MERGE,
        user_id=actor.id if actor else None,
        now=time.time(),
        data={"merged": sources},
    )


def unmerge(
    db: Database, project_id: int, error: ErrorRow, fingerprint: str, actor: UserRef | None
) -> int:
    """Split the events of ``fingerprint`` off ``error`` into a new error; its id."""
    with db.read() as conn:
        hashes = store.hashes_of(conn, error.id)
    if fingerprint not in hashes:
        raise NotFound("Fingerprint")
    if fingerprint == error.grouping_hash:
        raise InvalidParameter("grouping_hash: an error keeps its own fingerprint")
    matching, last_row = _scan(db, error.id, fingerprint)
    with db.write() as conn:
        bump_epoch(conn, project_id)
        matching += _matching(store.events_after(conn, error.id, last_row, 10**6), fingerprint)
        now = time.time()
        new_id = store.split_off(
            conn,
            project_id,
            error.id,
            _new_error(error, fingerprint, matching),
            [e.id for e in matching],
            _tag_counts(matching),
            now,
        )
        user_id = actor.id if actor else None
        data = {"grouping_hash": fingerprint, "events": len(matching)}
        activity.add(
            conn,
            project_id,
            [error.id],
            ActivityKind.UNMERGE,
            user_id=user_id,
            now=now,
            data={**data, "new_error": new_id},
        )
        activity.add(
            conn,
            project_id,
            [new_id],
            ActivityKind.UNMERGE,
            user_id=user_id,
            now=now,
            data={**data, "from_error": error.id},
        )
    return new_id


def _scan(db: Database, error_id: int, fingerprint: str) -> tuple[list[EventRow], int]:
    """The error's stored events of ``fingerprint`` (newest first), and the highest row
    id looked at (events stored later are checked again under the write lock)."""
    found: list[EventRow] = []
    after, last_row = None, 0
    while True:
        with db.read() as conn:
            rows = errors_read.list_events(
                conn, error_id, after=after, before=None, limit=SCAN_BATCH
            )
        if not rows:
            return found, last_row
        found += _matching(rows, fingerprint)
        last_row = max(last_row, *(r.id for r in rows))
        after = (rows[-1].timestamp, rows[-1].id)


def _matching(rows: list[EventRow], fingerprint: str) -> list[EventRow]:
    out = []
    for row in rows:
        g = grouping.calculate(row.payload)
        if fingerprint == g.hash or fingerprint in g.fallback_hashes:
            out.append(row)
    return out


def _new_error(error: ErrorRow, fingerprint: str, matching: list[EventRow]) -> store.NewError:
    """From the newest event of the fingerprint (or the error's own fields without any)."""
    if not matching:
        return store.NewError(
            grouping_hash=fingerprint,
            grouping_version=grouping.GROUPING_VERSION,
            fingerprint="[]",
            title=error.title,
            type=error.type,
            value=error.value,
            culprit=error.culprit,
            platform=error.platform,
            level=error.level,
            first_release=None,
            last_release=None,
            last_event_id="",
        )
    newest = max(matching, key=lambda e: (e.timestamp, e.id))
    oldest = min(matching, key=lambda e: (e.timestamp, e.id))
    g, summary = grouping.calculate(newest.payload), summarize(newest.payload)
    return store.NewError(
        grouping_hash=fingerprint,
        grouping_version=g.version,
        fingerprint=orjson.dumps(g.components).decode(),
        title=summary.title,
        type=summary.type or "",
        value=summary.value or "",
        culprit=summary.culprit or "",
        platform=summary.platform,
        level=summary.level,
        first_release=oldest.release,
        last_release=newest.release,
        last_event_id=newest.event_id,
    )


def _tag_counts(matching: list[EventRow]) -> dict[tuple[str, str], tuple[int, float]]:
    counts: Counter[tuple[str, str]] = Counter()
    last: dict[tuple[str, str], float] = {}
    for row in matching:
        for pair in event_tags(row.payload):
            counts[pair] += 1
            last[pair] = max(last.get(pair, 0.0), row.timestamp)
    return {pair: (n, last[pair]) for pair, n in counts.items()}
