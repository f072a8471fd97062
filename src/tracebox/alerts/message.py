"""What a notification says, once, for every channel: built when it is sent from the
stored snapshot plus the error's current counts and its event's top frame."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from sqlalchemy import Connection

from tracebox.store import alert_outbox, errors_read
from tracebox.store.alert_outbox import STORM

HEADLINES = {
    "new_error": "New error",
    "regression": "Regression",
    "surge": "Surge",
    "unignored": "No longer ignored",
    "release_health": "Release health",
    "assigned": "Assigned to you",
    "test": "Test notification",
}
TRIGGER_NOUNS = {
    "new_error": "new errors",
    "regression": "regressions",
    "surge": "surging errors",
    "unignored": "errors no longer ignored",
}


@dataclass(frozen=True)
class StormItem:
    error_id: int
    title: str
    culprit: str
    events: int
    url: str


@dataclass(frozen=True)
class Message:
    kind: str  # a trigger, "storm", "assigned" or "test"
    headline: str  # "New error in acme/web"
    title: str  # the error's title, or the storm's sentence
    text: str  # one or two sentences
    url: str  # where to look: the error, or the project's errors
    project: dict[str, Any]  # id, path, name, url
    settings_url: str  # notification settings (email) or the rule (chat)
    rule: dict[str, Any] | None = None  # id, name, trigger
    error: dict[str, Any] | None = None  # id, title, culprit, level, status, counts, url
    event: dict[str, Any] | None = None  # id, level, environment, release, timestamp
    top_frame: str | None = None  # "app/handlers.py in handle at line 42"
    facts: list[tuple[str, str]] = field(default_factory=list)  # label, value
    items: list[StormItem] = field(default_factory=list)  # storm: the top errors
    details: dict[str, Any] = field(default_factory=dict)  # the trigger's numbers


def project_url(base: str, path: str, suffix: str = "") -> str:
    return f"{base.rstrip('/')}/{quote(path)}/-/{suffix}"


def error_url(base: str, path: str, error_id: int) -> str:
    return project_url(base, path, f"error_tracking/{error_id}")


def build(conn: Connection, kind: str, payload: dict[str, Any], base: str) -> Message:
    """The message of a stored notification, with the error's current numbers."""
    project = dict(payload["project"])
    path = project["path"]
    project["url"] = project_url(base, path, "error_tracking")
    settings_url = project_url(base, path, "alerts/notifications")
    rule = payload.get("rule")
    if kind == STORM:
        return _storm(conn, payload, project, rule, base, settings_url)
    headline = f"{HEADLINES.get(kind, kind)} in {path}"
    details = dict(payload.get("details") or {})
    error, top_frame = _error(conn, payload, base)
    event = payload.get("event")
    if error is None:
        title, url = _release_title(details), project_url(base, path, "error_tracking/releases")
    else:
        title, url = error["title"], error["url"]
    return Message(
        kind=kind,
        headline=headline,
        title=title,
        text=_sentence(kind, details, error),
        url=url,
        project=project,
        settings_url=settings_url,
        rule=rule,
        error=error,
        event=event,
        top_frame=top_frame,
        facts=_facts(error, event, details),
        details=details,
    )


def _error(
    conn: Connection, payload: dict[str, Any], base: str
) -> tuple[dict[str, Any] | None, str | None]:
    snapshot = payload.get("error")
    if not snapshot:
        return None, None
    project = payload["project"]
    error = {**snapshot, "url": error_url(base, project["path"], snapshot["id"])}
    row = errors_read.get_error(conn, project["id"], snapshot["id"])
    top = None
    if row is not None:
        error.update(
            title=row.title,
            culprit=row.culprit,
            level=row.level,
            status=row.status,
            events=row.events_count,
            users=row.users_count,
            first_seen=row.first_seen,
            last_seen=row.last_seen,
        )
        event_id = (payload.get("event") or {}).get("id")
        stored = errors_read.get_event(conn, row.id, event_id) if event_id else None
        top = top_frame(stored.payload) if stored else None
    return error, top


def top_frame(event: dict[str, Any]) -> str | None:
    """The frame that raised: the last in-app frame of the last exception (else its last
    frame), as ``file in function at line N``."""
    values = (event.get("exception") or {}).get("values") or []
    frames: list[dict[str, Any]] = []
    for exc in reversed(values):
        frames = (exc.get("stacktrace") or {}).get("frames") or []
        if frames:
            break
    if not frames:
        frames = (event.get("stacktrace") or {}).get("frames") or []
    if not frames:
        return None
    frame = next((f for f in reversed(frames) if f.get("in_app")), frames[-1])
    where = frame.get("filename") or frame.get("abs_path") or frame.get("module") or "?"
    text = f"{where} in {frame.get('function') or '?'}"
    return text + (f" at line {frame['lineno']}" if frame.get("lineno") else "")


def _sentence(kind: str, details: dict[str, Any], error: dict[str, Any] | None) -> str:
    if kind == "surge":
        measure = f"{details.get('users')} users" if details.get("users") else None
        count = measure or f"{details.get('events')} events"
        text = f"{count} in the last {details.get('window_minutes')} minutes"
        if "day_earlier" in details:
            text += f" ({details['day_earlier']} in the same window a day earlier)"
        return text + "."
    if kind == "release_health":
        return (
            f"Crash-free sessions {details.get('crash_free_rate')}% (below "
            f"{details.get('below')}%) after {details.get('sessions')} sessions."
        )
    if kind == "regression":
        return "A resolved error happened again."
    if kind == "unignored":
        return "An ignored error passed its ignore condition."
    if kind == "assigned":
        return f"The error was assigned to {details.get('assignee', 'you')}."
    if kind == "test":
        return "This is a test notification from Tracebox: the action works."
    return "The first event of a new error." if error else ""


def _release_title(details: dict[str, Any]) -> str:
    release = details.get("release")
    return f"Release {release}" if release else "Tracebox"


def _facts(
    error: dict[str, Any] | None, event: dict[str, Any] | None, details: dict[str, Any]
) -> list[tuple[str, str]]:
    facts = []
    if error is not None:
        if "events" in error:
            facts.append(("Events", str(error["events"])))
            facts.append(("Users", str(error["users"])))
        if error.get("culprit"):
            facts.append(("Culprit", str(error["culprit"])))
    if event is not None:
        for key in ("level", "environment", "release"):
            if event.get(key):
                facts.append((key.capitalize(), str(event[key])))
    if "release" in details and not event:
        facts.append(("Release", str(details["release"])))
    return facts


def _storm(
    conn: Connection,
    payload: dict[str, Any],
    project: dict[str, Any],
    rule: dict[str, Any] | None,
    base: str,
    settings_url: str,
) -> Message:
    trigger = (rule or {}).get("trigger", "new_error")
    total = int(payload.get("individual", 0)) + int(payload.get("folded", 0))
    minutes = max(1, round(float(payload.get("window_seconds", 300)) / 60))
    noun = TRIGGER_NOUNS.get(trigger, "alerts")
    title = f"{total} {noun} in {project['path']} in the last {minutes} minutes"
    items = _storm_items(conn, payload, base)
    shown = len(items)
    text = f"Alerts of this rule were folded into this message. The top {shown}:"
    return Message(
        kind=STORM,
        headline=f"Alert storm in {project['path']}",
        title=title,
        text=text,
        url=project["url"],
        project=project,
        settings_url=settings_url,
        rule=rule,
        items=items,
        facts=[("Triggers", str(total)), ("Folded", str(payload.get("folded", 0)))],
        details={"total": total, "folded": payload.get("folded", 0), "window_minutes": minutes},
    )


MAX_STORM_ITEMS_SHOWN = 10


def _storm_items(conn: Connection, payload: dict[str, Any], base: str) -> list[StormItem]:
    """The storm's errors (folded, and those notified one by one in its window), busiest
    first by their current event counts."""
    project = payload["project"]
    stored_items = list(payload.get("errors", []))
    rule_id = (payload.get("rule") or {}).get("id")
    if rule_id is not None:
        first_at = float(payload["first_at"])
        since = first_at - float(payload.get("window_seconds", 300))
        folded = {int(i["id"]) for i in stored_items}
        for error_id in alert_outbox.notified_errors(conn, rule_id, since, first_at):
            if error_id not in folded:
                stored_items.append({"id": error_id, "events": 0})
    items = []
    for stored in stored_items:
        row = errors_read.get_error(conn, project["id"], int(stored["id"]))
        events = row.events_count if row else int(stored.get("events", 0))
        title = row.title if row else str(stored.get("title", ""))
        culprit = row.culprit if row else str(stored.get("culprit", ""))
        url = error_url(base, project["path"], int(stored["id"]))
        items.append(StormItem(int(stored["id"]), title, culprit, events, url))
    items.sort(key=lambda i: (-i.events, i.error_id))
    return items[:MAX_STORM_ITEMS_SHOWN]


def delivery_title(payload: dict[str, Any], kind: str) -> str | None:
    """A delivery's one line: the error's title, the storm's size, the release."""
    if kind == "storm":
        total = int(payload.get("individual", 0)) + int(payload.get("folded", 0))
        return f"{total} alerts of one rule folded into one message"
    error = payload.get("error")
    if error:
        return str(error.get("title"))
    release = (payload.get("details") or {}).get("release")
    return f"Release {release}" if release else None
