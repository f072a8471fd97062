"""Sentry's issue PUT body (``status``, ``statusDetails``, ``assignedTo``, ``inbox``) as an
``ErrorChange``, and the ``statusDetails`` / ``assignedTo`` / ``activity`` Sentry answers
with, so GitLab's Sentry client and Sentry tools read and change them."""

from __future__ import annotations

import datetime as dt
from typing import Any

from tracebox.api.timefmt import iso_seconds
from tracebox.errors import InvalidParameter
from tracebox.models import ErrorStatus, User
from tracebox.store import Database
from tracebox.tracking.assignees import actor
from tracebox.tracking.assignees import find as find_assignee
from tracebox.tracking.models import (
    KEEP,
    Activity,
    ErrorChange,
    Keep,
    Resolution,
    StatusChange,
    StatusDetails,
    UserRef,
)

Json = dict[str, Any]
STATUSES = {
    "resolved": ErrorStatus.RESOLVED,
    "resolvedInNextRelease": ErrorStatus.RESOLVED,
    "unresolved": ErrorStatus.UNRESOLVED,
    "ignored": ErrorStatus.IGNORED,
    "muted": ErrorStatus.IGNORED,  # Sentry's older word for ignored
}
MAX_COUNT = 10**9


def change_of(db: Database, project_id: int, body: Json, me: User) -> ErrorChange:
    return ErrorChange(
        status=_status(body),
        assignee=_assignee(db, project_id, body, me),
        reviewed=body.get("inbox") is False,
    )


def _status(body: Json) -> StatusChange | None:
    requested = body.get("status")
    details = body.get("statusDetails") or {}
    if not isinstance(details, dict):
        raise InvalidParameter("statusDetails is invalid")
    if requested is None:
        return None
    if not isinstance(requested, str) or requested not in STATUSES:
        raise InvalidParameter("status is invalid")
    status = STATUSES[requested]
    resolution, release = Resolution.NOW, None
    if requested == "resolvedInNextRelease" or details.get("inNextRelease") is True:
        resolution = Resolution.IN_NEXT_RELEASE
    elif details.get("inRelease") is not None:
        if not isinstance(details["inRelease"], str):
            raise InvalidParameter("statusDetails.inRelease is invalid")
        resolution, release = Resolution.IN_RELEASE, details["inRelease"]
    for window in ("ignoreWindow", "ignoreUserWindow"):
        if details.get(window):
            raise InvalidParameter(f"statusDetails.{window} is not supported: leave it out")
    return StatusChange(
        status=status,
        resolution=resolution if status is ErrorStatus.RESOLVED else Resolution.NOW,
        release=release,
        ignore_minutes=_count(details, "ignoreDuration"),
        ignore_until=_moment(details.get("ignoreUntil")),
        ignore_count=_count(details, "ignoreCount"),
        ignore_user_count=_count(details, "ignoreUserCount"),
    )


def _count(details: Json, key: str) -> int | None:
    value = details.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_COUNT:
        raise InvalidParameter(f"statusDetails.{key} is invalid")
    return value


def _moment(value: Any) -> float | None:
    if value is None:
        return None
    try:
        moment = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError as e:
        raise InvalidParameter("statusDetails.ignoreUntil is invalid") from e
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


def _assignee(db: Database, project_id: int, body: Json, me: User) -> UserRef | Keep | None:
    """``assignedTo``: a username, ``user:<id>``, ``me``; empty or null unassigns."""
    if "assignedTo" not in body:
        return KEEP
    value = body["assignedTo"]
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise InvalidParameter("assignedTo is invalid")
    if value == "me":
        return find_assignee(db, project_id, user_id=me.id)
    if value.startswith("user:") and value[5:].isascii() and value[5:].isdigit():
        return find_assignee(db, project_id, user_id=int(value[5:]))
    return find_assignee(db, project_id, username=value)


def assigned_to(user: UserRef | None) -> Json | None:
    if user is None:
        return None
    return {
        "type": "user",
        "id": str(user.id),
        "name": user.name or user.username,
        "email": user.email,
        "username": user.username,
    }


def status_details(status: ErrorStatus, d: StatusDetails) -> Json:
    """Only the keys that apply, as Sentry's serializer writes them."""
    if status is ErrorStatus.RESOLVED and d.resolution is Resolution.IN_RELEASE:
        return {"inRelease": d.release}
    if status is ErrorStatus.RESOLVED and d.resolution is Resolution.IN_NEXT_RELEASE:
        return {"inNextRelease": True}
    if status is ErrorStatus.IGNORED:
        found: Json = {}
        if d.ignore_until is not None:
            found["ignoreUntil"] = iso_seconds(d.ignore_until)
        if d.ignore_count is not None:
            found["ignoreCount"] = d.ignore_count
            found["ignoreWindow"] = None
        if d.ignore_user_count is not None:
            found["ignoreUserCount"] = d.ignore_user_count
            found["ignoreUserWindow"] = None
        return found
    return {}


def activity(items: list[Activity]) -> list[Json]:
    """Newest first, as Sentry lists it; a comment's text in ``data.text``."""
    out = []
    for a in reversed(items):
        data = {"text": a.text} if a.text is not None else dict(a.data)
        out.append(
            {
                "id": str(a.id),
                "type": a.kind.value,
                "data": data,
                "dateCreated": iso_seconds(a.created_at),
                "user": assigned_to(a.user),
            }
        )
    return out


__all__ = ["activity", "actor", "assigned_to", "change_of", "status_details"]
