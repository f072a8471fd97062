"""The workflow's calls into the alerts (issue 14): "assigned to you" emails, and the
``unignored`` rules when an ignored error's condition passed. Both run inside the
transaction that made the change, so a notice is queued exactly when the change commits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import Connection

from tracebox.alerts import AlertPolicy, ErrorActivity, EventInfo, hooks
from tracebox.store import errors_read
from tracebox.store.rows import PreparedEvent


def activity_of(conn: Connection, project_id: int, error_id: int) -> ErrorActivity | None:
    """An error as the alerts see it, from its stored row (its newest event's summary)."""
    row = errors_read.get_error(conn, project_id, error_id)
    if row is None:
        return None
    event = EventInfo(
        event_id=row.last_event_id or "",
        timestamp=row.last_seen,
        level=row.level,
        environment=None,
        release=row.last_release,
        title=row.title,
        culprit=row.culprit,
    )
    return ErrorActivity(error_id, project_id, event, events=row.events_count)


def assigned(
    conn: Connection, project_id: int, error_id: int, assignee_id: int, actor_id: int | None
) -> None:
    found = activity_of(conn, project_id, error_id)
    if found is not None:
        hooks.assigned(conn, AlertPolicy(), found, assignee_id, actor_id=actor_id)


def unignored(
    conn: Connection,
    policy: AlertPolicy,
    errors: Mapping[int, int],
    by_error: Mapping[int, Sequence[PreparedEvent]],
) -> None:
    """``errors``: error id -> project id of the errors the digest brought back. Rules
    filter on the batch's newest event of the error, else on the error's own row."""
    for error_id, project_id in sorted(errors.items()):
        batch = by_error.get(error_id)
        if batch:
            newest = max(batch, key=lambda e: e.timestamp)
            found: ErrorActivity | None = ErrorActivity(error_id, project_id, newest, len(batch))
        else:
            found = activity_of(conn, project_id, error_id)
        if found is not None:
            hooks.ignored_condition_passed(conn, policy, found)
