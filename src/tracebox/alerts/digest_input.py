"""Build the alerts' input from what the digest wrote (the one adapter to re-wire when
``BatchResult`` changes shape)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, select

from tracebox.alerts.model import AlertBatch, ErrorActivity, LazyBatch
from tracebox.store.digest import BatchResult
from tracebox.store.rows import PreparedEvent
from tracebox.store.tables import errors

# Filled by the workflow issue ("resolved in release X"); read when the column exists.
RESOLVED_IN_RELEASE = "resolved_in_release"


def activity(
    error_id: int, batch: Sequence[PreparedEvent], *, created: bool, regressed: bool
) -> ErrorActivity:
    latest = batch[0] if len(batch) == 1 else max(batch, key=lambda e: e.timestamp)
    return ErrorActivity(error_id, latest.project_id, latest, len(batch), created, regressed)


def alert_batch(
    conn: Connection, result: BatchResult, *sessions: Mapping[int, Iterable[Mapping[str, Any]]]
) -> LazyBatch:
    """``result``: what ``store.digest.write_events`` stored; ``sessions``: the batch's
    session updates and aggregates per project (rows with a ``release``). Built lazily:
    only the errors of projects with alert rules become ``ErrorActivity``."""
    projects = {batch[0].project_id for batch in result.by_error.values() if batch}
    for per_project in sessions:
        projects.update(per_project)
    return LazyBatch(projects, lambda wanted: _build(conn, result, sessions, wanted))


def _build(
    conn: Connection,
    result: BatchResult,
    sessions: Sequence[Mapping[int, Iterable[Mapping[str, Any]]]],
    wanted: set[int],
) -> AlertBatch:
    created = {e.error_id for e in result.created}
    regressed = {e.error_id for e in result.regressed}
    resolved_in = _resolved_in_releases(conn, regressed)
    activities = []
    for error_id, batch in result.by_error.items():
        if not batch or batch[0].project_id not in wanted:
            continue
        a = activity(error_id, batch, created=error_id in created, regressed=error_id in regressed)
        a.resolved_in_release = resolved_in.get(error_id)
        activities.append(a)
    releases: dict[int, set[str]] = defaultdict(set)
    for per_project in sessions:
        for project_id, rows in per_project.items():
            if project_id in wanted:
                releases[project_id].update(str(r["release"]) for r in rows if r.get("release"))
    return AlertBatch(tuple(activities), {p: frozenset(r) for p, r in releases.items() if r})


def _resolved_in_releases(conn: Connection, regressed: set[int]) -> dict[int, str]:
    column = errors.c.get(RESOLVED_IN_RELEASE)
    if column is None or not regressed:
        return {}
    query = select(errors.c.id, column).where(errors.c.id.in_(sorted(regressed)))
    return {int(i): str(r) for i, r in conn.execute(query) if r is not None}
