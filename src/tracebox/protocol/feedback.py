"""User feedback: ``feedback`` items of current SDKs (an event of type ``feedback`` whose
``contexts.feedback`` holds the message) and the older ``user_report`` items (``{event_id,
name, email, comments}``, sentry-java, @sentry/browser 7's ``captureUserFeedback``). Pure.

Either names the event it is about (``associated_event_id`` / ``event_id``) when the user
answered an error; the store links it to that event's error.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from tracebox.protocol._coerce import text
from tracebox.protocol.event import parse_event_id
from tracebox.protocol.timestamps import clamp_timestamp, parse_timestamp

# As Sentry's UserReport (name 128, email 75 characters); comments as an event message.
MAX_NAME_CHARS = 128
MAX_EMAIL_CHARS = 75
MAX_COMMENTS_CHARS = 8192
MAX_URL_CHARS = 2048
MAX_FIELD_CHARS = 200  # source, release, environment


@dataclass(frozen=True)
class Feedback:
    feedback_id: str  # 32 hex: the feedback's own id; a re-sent one is stored once
    event_id: str | None  # the event the user answered, when there was one
    name: str
    email: str
    comments: str
    url: str | None
    source: str  # "widget", "api", ... ; "user_report" for the older items
    release: str | None
    environment: str | None
    timestamp: float


def from_feedback_event(raw: Any, *, received_at: float) -> Feedback | None:
    """A ``feedback`` item, or None when it holds no message."""
    if not isinstance(raw, dict):
        return None
    contexts = raw.get("contexts")
    context = contexts.get("feedback") if isinstance(contexts, dict) else None
    if not isinstance(context, dict):
        return None
    comments = text(context.get("message"), MAX_COMMENTS_CHARS)
    if comments is None:
        return None
    user = raw.get("user") if isinstance(raw.get("user"), dict) else {}
    assert isinstance(user, dict)
    fields: dict[str, Any] = {
        "event_id": parse_event_id(context.get("associated_event_id")),
        "name": text(context.get("name"), MAX_NAME_CHARS) or _user_name(user),
        "email": text(context.get("contact_email"), MAX_EMAIL_CHARS)
        or text(user.get("email"), MAX_EMAIL_CHARS)
        or "",
        "comments": comments,
        "url": text(context.get("url"), MAX_URL_CHARS),
        "source": text(context.get("source"), MAX_FIELD_CHARS) or "api",
        "release": text(raw.get("release"), MAX_FIELD_CHARS),
        "environment": text(raw.get("environment"), MAX_FIELD_CHARS),
        "timestamp": clamp_timestamp(parse_timestamp(raw.get("timestamp")), received_at),
    }
    own_id = parse_event_id(raw.get("event_id")) or _content_id(fields)
    return Feedback(feedback_id=own_id, **fields)


def from_user_report(raw: Any, *, received_at: float) -> Feedback | None:
    """A ``user_report`` item, or None without comments."""
    if not isinstance(raw, dict):
        return None
    comments = text(raw.get("comments"), MAX_COMMENTS_CHARS)
    if comments is None:
        return None
    fields: dict[str, Any] = {
        "event_id": parse_event_id(raw.get("event_id")),
        "name": text(raw.get("name"), MAX_NAME_CHARS) or "",
        "email": text(raw.get("email"), MAX_EMAIL_CHARS) or "",
        "comments": comments,
        "url": None,
        "source": "user_report",
        "release": None,
        "environment": None,
        "timestamp": received_at,
    }
    # No id of its own: the same report sent twice is the same content.
    return Feedback(feedback_id=_content_id({**fields, "timestamp": None}), **fields)


def _user_name(user: dict[str, Any]) -> str:
    name = text(user.get("name"), MAX_NAME_CHARS)
    return name or text(user.get("username"), MAX_NAME_CHARS) or ""


def _content_id(fields: dict[str, Any]) -> str:
    data = orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)
    return hashlib.md5(data, usedforsecurity=False).hexdigest()
