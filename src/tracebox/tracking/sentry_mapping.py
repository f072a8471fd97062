"""Sentry web API answers (reference section 10) as Tracebox's tracking records.

Field by field as GitLab's Sentry client reads them: the issue id must be a numeric
string, ``count`` is a string, ``stats["24h"]`` is ``[[unix_ts, count], ...]``, and the
latest event's first ``exception`` value with a stack trace gives the frames.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from tracebox.models import ErrorStatus
from tracebox.sentry_client import SentryError
from tracebox.tracking.events import mechanism
from tracebox.tracking.models import (
    Bucket,
    ErrorSummary,
    Event,
    ExceptionInfo,
    Frame,
    Resolution,
    StatusDetails,
    UserRef,
)

Json = dict[str, Any]


def _shape(message: str) -> SentryError:
    return SentryError(f"Sentry API response is invalid: {message}", "shape")


def issue_id(value: Any) -> int:
    text = str(value)
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise _shape(f"issue id {text[:40]!r} is not numeric")
    return int(text)


def timestamp(value: Any) -> float:
    if not isinstance(value, str):
        return 0.0
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def count(value: Any) -> int:
    """A count Sentry sends as a number or a numeric string; 0 for anything else."""
    return max(0, _int(value))


def _dict(value: Any) -> Json | None:
    return value if isinstance(value, dict) else None


def _status(value: Any) -> ErrorStatus:
    if value in ("resolved", "resolvedInNextRelease"):
        return ErrorStatus.RESOLVED
    return ErrorStatus.IGNORED if value in ("ignored", "muted") else ErrorStatus.UNRESOLVED


def _buckets(stats: Any) -> list[Bucket]:
    rows = stats.get("24h") if isinstance(stats, dict) else None
    if not isinstance(rows, list):
        return []
    return [Bucket(float(r[0]), _int(r[1])) for r in rows if isinstance(r, list) and len(r) == 2]


def summary(issue: Any, project_id: int) -> ErrorSummary:
    """One issue of ``GET .../issues/`` or ``GET /api/0/issues/{id}/``."""
    if not isinstance(issue, dict):
        raise _shape("an issue is not an object")
    metadata = issue.get("metadata") if isinstance(issue.get("metadata"), dict) else {}
    assert isinstance(metadata, dict)
    return ErrorSummary(
        id=issue_id(issue.get("id")),
        project_id=project_id,
        title=str(issue.get("title") or ""),
        type=str(metadata.get("type") or ""),
        value=str(metadata.get("value") or ""),
        culprit=str(issue.get("culprit") or ""),
        status=_status(issue.get("status")),
        events_count=_int(issue.get("count")),
        users_count=_int(issue.get("userCount")),
        first_seen=timestamp(issue.get("firstSeen")),
        last_seen=timestamp(issue.get("lastSeen")),
        platform=str(issue.get("platform") or ""),
        level=str(issue.get("level") or "error"),
        frequency=_buckets(issue.get("stats")),
        unhandled=issue.get("isUnhandled") is True,
        assignee=_assignee(issue.get("assignedTo")),
        status_details=_status_details(issue.get("status"), issue.get("statusDetails")),
        external_issue_url=_gitlab_issue(issue.get("pluginIssues")),
    )


def _assignee(value: Any) -> UserRef | None:
    """Sentry's ``assignedTo`` (a user; a team is shown by its name)."""
    if not isinstance(value, dict):
        return None
    name = str(value.get("name") or value.get("email") or "")
    user_id = str(value.get("id") or "")
    return UserRef(
        id=int(user_id) if user_id.isascii() and user_id.isdigit() and len(user_id) < 18 else 0,
        username=str(value.get("username") or name),
        name=name,
        email=str(value.get("email") or ""),
    )


def _status_details(status: Any, value: Any) -> StatusDetails:
    d = value if isinstance(value, dict) else {}
    if status == "resolvedInNextRelease" or d.get("inNextRelease"):
        return StatusDetails(resolution=Resolution.IN_NEXT_RELEASE)
    if isinstance(d.get("inRelease"), str):
        return StatusDetails(resolution=Resolution.IN_RELEASE, release=d["inRelease"])
    until = timestamp(d.get("ignoreUntil")) or None
    count = _int(d.get("ignoreCount")) or None
    users = _int(d.get("ignoreUserCount")) or None
    return StatusDetails(ignore_until=until, ignore_count=count, ignore_user_count=users)


def _gitlab_issue(plugin_issues: Any) -> str | None:
    """The GitLab issue Sentry's GitLab plugin linked, as GitLab's client reads it."""
    for item in plugin_issues if isinstance(plugin_issues, list) else []:
        issue = item.get("issue") if isinstance(item, dict) and item.get("id") == "gitlab" else None
        url = issue.get("url") if isinstance(issue, dict) else None
        if isinstance(url, str) and url.startswith(("https://", "http://")):
            return url
    return None


def release(value: Any) -> str | None:
    return str(value.get("version")) if isinstance(value, dict) and value.get("version") else None


def _frame(f: Any) -> Frame:
    f = f if isinstance(f, dict) else {}
    context = [
        (_int(c[0]), str(c[1]).rstrip("\n"))
        for c in f.get("context") or []
        if isinstance(c, list) and len(c) == 2
    ]
    return Frame(
        filename=f.get("filename"),
        abs_path=f.get("absPath"),
        function=f.get("function"),
        module=f.get("module"),
        lineno=f.get("lineNo") if isinstance(f.get("lineNo"), int) else None,
        colno=f.get("colNo") if isinstance(f.get("colNo"), int) else None,
        in_app=f.get("inApp") if isinstance(f.get("inApp"), bool) else None,
        context=context,
        vars=_dict(f.get("vars")),
    )


def _exceptions(entries: list[Any]) -> list[ExceptionInfo]:
    found: list[ExceptionInfo] = []
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("type") != "exception":
            continue
        for v in (entry.get("data") or {}).get("values") or []:
            trace = v.get("stacktrace") if isinstance(v, dict) else None
            frames = trace.get("frames") if isinstance(trace, dict) else None
            found.append(
                ExceptionInfo(
                    type=v.get("type"),
                    value=v.get("value"),
                    module=v.get("module"),
                    frames=[_frame(f) for f in frames or []],
                    mechanism=mechanism(v.get("mechanism")),
                )
            )
    return found


def _message(event: Json, entries: list[Any]) -> str:
    for entry in entries:
        if isinstance(entry, dict) and entry.get("type") == "message":
            return str((entry.get("data") or {}).get("formatted") or "")
    return str(event.get("message") or "")


def event(body: Any, error_id: int, project_id: int) -> Event:
    """``GET /api/0/issues/{id}/events/latest/``."""
    if not isinstance(body, dict):
        raise _shape("the latest event is not an object")
    entries = body.get("entries") if isinstance(body.get("entries"), list) else []
    assert isinstance(entries, list)
    exceptions = _exceptions(entries)
    main = next((x for x in exceptions if x.frames), None)
    tags = [
        (str(t.get("key")), str(t.get("value")))
        for t in body.get("tags") or []
        if isinstance(t, dict)
    ]
    tag = dict(tags)
    return Event(
        event_id=str(body.get("eventID") or body.get("id") or ""),
        error_id=error_id,
        project_id=project_id,
        timestamp=timestamp(body.get("dateCreated")),
        received_at=timestamp(body.get("dateReceived")),
        level=tag.get("level", "error"),
        platform=str(body.get("platform") or ""),
        environment=tag.get("environment"),
        release=tag.get("release"),
        logger=tag.get("logger"),
        message=_message(body, entries),
        title=str(body.get("title") or ""),
        culprit=str(body.get("culprit") or ""),
        user=_dict(body.get("user")),
        tags=tags,
        exceptions=exceptions,
        stack_trace=main.frames if main else [],
        contexts=_dict(body.get("contexts")) or {},
        sdk=_dict(body.get("sdk")),
        extra=_dict(body.get("context")) or {},  # Sentry's event API calls `extra` "context"
    )
