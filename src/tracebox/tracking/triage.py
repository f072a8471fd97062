"""Triage changes on this instance's store: status with Sentry's conditions, assignee,
review, each recorded as activity with who and when (the ``IntegratedSource`` side).

``apply`` changes a list of errors in the caller's write transaction; single changes and
each batch of a bulk action go through it, so both record the same activity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection

from tracebox.errors import InvalidParameter
from tracebox.models import ErrorStatus
from tracebox.store import activity, triage
from tracebox.store.triage import UserRow
from tracebox.tracking import notices
from tracebox.tracking.models import (
    KEEP,
    ActivityKind,
    ErrorChange,
    Resolution,
    StatusChange,
    UserRef,
)

MAX_RELEASE_CHARS = 255  # the releases column
MAX_IGNORE_MINUTES = 10 * 365 * 24 * 60  # ten years: longer is "forever"
MAX_IGNORE_COUNT = 10**9

RESOLVED_KINDS = {
    Resolution.NOW: ActivityKind.SET_RESOLVED,
    Resolution.IN_RELEASE: ActivityKind.SET_RESOLVED_IN_RELEASE,
    Resolution.IN_NEXT_RELEASE: ActivityKind.SET_RESOLVED_IN_NEXT_RELEASE,
}


def validate(change: StatusChange) -> StatusChange:
    """Refuse contradictory or out-of-range conditions (400) before anything changes."""
    ignoring = (change.ignore_minutes, change.ignore_until, change.ignore_count)
    if change.status is not ErrorStatus.IGNORED and (
        any(v is not None for v in ignoring) or change.ignore_user_count is not None
    ):
        raise InvalidParameter("status_details: ignore conditions need status ignored")
    if change.status is not ErrorStatus.RESOLVED and change.resolution is not Resolution.NOW:
        raise InvalidParameter("status_details: a release needs status resolved")
    if change.resolution is Resolution.IN_RELEASE:
        release = (change.release or "").strip()
        if not release or len(release) > MAX_RELEASE_CHARS:
            raise InvalidParameter("in_release is invalid: give a release of 1-255 characters")
    if change.ignore_minutes is not None and not 1 <= change.ignore_minutes <= MAX_IGNORE_MINUTES:
        raise InvalidParameter(f"ignore_duration is invalid: 1 to {MAX_IGNORE_MINUTES} minutes")
    if change.ignore_until is not None and not math.isfinite(change.ignore_until):
        raise InvalidParameter("ignore_until is invalid")
    for name, value in (
        ("ignore_count", change.ignore_count),
        ("ignore_user_count", change.ignore_user_count),
    ):
        if value is not None and not 1 <= value <= MAX_IGNORE_COUNT:
            raise InvalidParameter(f"{name} is invalid: 1 to {MAX_IGNORE_COUNT}")
    return change


def apply(
    conn: Connection,
    project_id: int,
    ids: Sequence[int],
    change: ErrorChange,
    actor: UserRef | None,
    now: float,
) -> set[int]:
    """Apply ``change`` to the project's errors ``ids``; return the ids that changed."""
    user_id = actor.id if actor else None
    changed: set[int] = set()
    if change.status is not None:
        changed |= _status(conn, project_id, ids, change.status, user_id, now)
    if change.assignee is not KEEP:
        assignee = change.assignee
        done = triage.assign(conn, project_id, ids, assignee.id if assignee else None)
        kind = ActivityKind.ASSIGNED if assignee else ActivityKind.UNASSIGNED
        data = {"assignee": assignee.id, "username": assignee.username} if assignee else {}
        activity.add(conn, project_id, done, kind, user_id=user_id, now=now, data=data)
        if assignee and len(ids) == 1:  # one error assigned: email the assignee (not bulk)
            for error_id in done:
                notices.assigned(conn, project_id, error_id, assignee.id, user_id)
        changed |= set(done)
    if change.reviewed:
        done = triage.mark_reviewed(conn, project_id, ids)
        activity.add(conn, project_id, done, ActivityKind.REVIEWED, user_id=user_id, now=now)
        changed |= set(done)
    return changed


def _status(
    conn: Connection,
    project_id: int,
    ids: Sequence[int],
    change: StatusChange,
    user_id: int | None,
    now: float,
) -> set[int]:
    if change.status is ErrorStatus.RESOLVED:
        release = change.release.strip() if change.release else None
        if change.resolution is Resolution.IN_NEXT_RELEASE:
            release = triage.latest_release(conn, project_id)  # fixed after this one
        elif change.resolution is Resolution.NOW:
            release = None
        done = triage.resolve(
            conn, project_id, ids, resolution=change.resolution.value, release=release, now=now
        )
        kind = RESOLVED_KINDS[change.resolution]
        data: dict[str, Any] = {"version": release} if release else {}
    elif change.status is ErrorStatus.IGNORED:
        until = change.ignore_until
        if change.ignore_minutes is not None:
            until = now + change.ignore_minutes * 60
        done = triage.ignore(
            conn,
            project_id,
            ids,
            until=until,
            count=change.ignore_count,
            user_count=change.ignore_user_count,
        )
        kind = ActivityKind.SET_IGNORED
        data = {
            k: v
            for k, v in (
                ("ignoreUntil", until),
                ("ignoreDuration", change.ignore_minutes),
                ("ignoreCount", change.ignore_count),
                ("ignoreUserCount", change.ignore_user_count),
            )
            if v is not None
        }
    else:
        done = triage.unresolve(conn, project_id, ids)
        kind, data = ActivityKind.SET_UNRESOLVED, {}
    activity.add(conn, project_id, done, kind, user_id=user_id, now=now, data=data)
    return set(done)


def user_ref(row: UserRow) -> UserRef:
    return UserRef(id=row.id, username=row.username, name=row.name, email=row.email)
