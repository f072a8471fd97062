"""Build the alerts' input from what the digest wrote (the one adapter to re-wire when
``BatchResult`` changes shape)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import Connection, select

from tracebox.alerts.model import AlertBatch, ErrorActivity, EventInfo
from tracebox.store.digest import BatchResult, PreparedEvent
from tracebox.store.tables import errors

# Filled by the workflow issue ("resolved in release X"); read when the column exists.
RESOLVED_IN_RELEASE = "resolved_in_release"


def event_info(e: PreparedEvent) -> EventInfo:
    return EventInfo(
        event_id=e.event_id,
        timestamp=e.timestamp,
        level=e.level,
        environment=e.environment,
        release=e.release,
        title=e.title,
        culprit=e.culprit,
        tags=e.tags,
    )


def activity(
    error_id: int, batch: Sequence[PreparedEvent], *, created: bool, regressed: bool
) -> ErrorActivity:
    latest = max(batch, key=lambda e: e.timestamp)
    minutes: dict[int, int] = defaultdict(int)
    for e in batch:
        minutes[int(e.timestamp // 60)] += 1
    return ErrorActivity(
        error_id=error_id,
        project_id=latest.project_id,
        event=event_info(latest),
        events=len(batch),
        created=created,
        regressed=regressed,
        minutes=dict(minutes),
    )


def alert_batch(
    conn: Connection, result: BatchResult, *sessions: Mapping[int, Iterable[Mapping[str, Any]]]
) -> AlertBatch:
    """``result``: what ``store.digest.write_events`` stored; ``sessions``: the batch's
    session updates and aggregates per project (rows with a ``release``)."""
    created, regressed = result.created_ids, result.regressed_ids
    resolved_in = _resolved_in_releases(conn, regressed)
    activities = []
    for error_id, batch in result.by_error.items():
        a = activity(error_id, batch, created=error_id in created, regressed=error_id in regressed)
        if error_id in resolved_in:
            a = replace(a, resolved_in_release=resolved_in[error_id])
        activities.append(a)
    releases: dict[int, set[str]] = defaultdict(set)
    for per_project in sessions:
        for project_id, rows in per_project.items():
            releases[project_id].update(str(r["release"]) for r in rows if r.get("release"))
    return AlertBatch(tuple(activities), {p: frozenset(r) for p, r in releases.items() if r})


def _resolved_in_releases(conn: Connection, regressed: set[int]) -> dict[int, str]:
    column = errors.c.get(RESOLVED_IN_RELEASE)
    if column is None or not regressed:
        return {}
    query = select(errors.c.id, column).where(errors.c.id.in_(sorted(regressed)))
    return {int(i): str(r) for i, r in conn.execute(query) if r is not None}
