"""What an error shows, derived from a normalized event as Sentry does (reference section 5
"Display derivation": ``eventtypes/error.py``, ``eventtypes/base.py``, ``culprit.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_TITLE_LINE_CHARS = 100  # first line of a value or message in a title, as Sentry
MAX_METADATA_VALUE_CHARS = 1024  # exception value in metadata, as Sentry
MAX_CULPRIT_CHARS = 200  # as Sentry's MAX_CULPRIT_LENGTH

_NATIVE_PLATFORMS = ("objc", "cocoa", "native")
_JS_PLATFORMS = ("javascript", "node")


@dataclass(frozen=True)
class EventSummary:
    title: str
    type: str | None  # main exception type; None for message events and synthetic types
    value: str | None  # main exception value (<= 1024 chars); None without an exception
    culprit: str | None
    platform: str
    level: str
    release: str | None
    environment: str
    message: str  # logentry.formatted, else the main exception value, else ""
    user_key: str | None  # "id:..", else "email:..", "username:..", "ip:..", else None
    transaction: str | None


def summarize(event: dict[str, Any]) -> EventSummary:
    """The summary of ``event``, which must be the output of ``normalize_event``.

    An event with an exception is an error: its main exception is the last one, the title
    ``Type: first line of value``. Otherwise the title is the first line of the message,
    else ``<unlabeled event>``.
    """
    exceptions: list[dict[str, Any]] = event.get("exception", {}).get("values", [])
    main = exceptions[-1] if exceptions else None
    logentry: dict[str, Any] = event.get("logentry") or {}
    platform: str = event["platform"]
    message = logentry.get("formatted") or logentry.get("message") or ""
    exc_type, value = _type_and_value(main, message)
    if main is not None and (exc_type is not None or not message):
        title = _error_title(exc_type, value, main)
    else:
        # A message event, or a message with a synthetic exception attached only to carry
        # its stack trace (@sentry/node 8+ captureMessage): people know it by its text.
        title = _first_line(message) or "<unlabeled event>"
    return EventSummary(
        title=title,
        type=exc_type,
        value=value,
        culprit=_culprit(event, exceptions, platform),
        platform=platform,
        level=event["level"],
        release=event.get("release"),
        environment=event["environment"],
        message=logentry.get("formatted") or value or "",
        user_key=_user_key(event.get("user")),
        transaction=event.get("transaction"),
    )


def _type_and_value(main: dict[str, Any] | None, message: str) -> tuple[str | None, str | None]:
    if main is None:
        return None, None
    value = main.get("value", "")[:MAX_METADATA_VALUE_CHARS]
    if main.get("mechanism", {}).get("synthetic") is True or _message_stack(main, message):
        return None, value  # a made-up type (a signal handler's, a message's) says nothing
    return main.get("type", "Error"), value


def _error_title(exc_type: str | None, value: str | None, main: dict[str, Any]) -> str:
    if exc_type is None:
        frame = _culprit_frame(main.get("stacktrace", {}).get("frames", []))
        return (frame or {}).get("function") or "<unknown>"
    if not value:
        return exc_type
    return f"{exc_type}: {_first_line(value)}"


def _first_line(text: str) -> str:
    lines = text.splitlines()
    return _truncate(lines[0], MAX_TITLE_LINE_CHARS) if lines else ""


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _culprit(event: dict[str, Any], exceptions: list[dict[str, Any]], platform: str) -> str | None:
    """transaction, else the culprit frame of the last stack trace (of the last exception
    that has one, else the top-level one), else ``request.url``, else the SDK's culprit.
    The synthetic exception @sentry/browser wraps around a captured message's stack
    (``captureMessage`` with ``attachStacktrace``) starts in the SDK's own minified code:
    it never names the culprit (the deprecated top-level stack trace, PHP's way of
    sending a message's stack, still does: its SDK removes its own frames)."""
    if "transaction" in event:
        return _truncate(event["transaction"], MAX_CULPRIT_CHARS)
    message = _message_text(event)
    stacktraces = [
        e["stacktrace"] for e in exceptions if "stacktrace" in e and not _message_stack(e, message)
    ]
    if not stacktraces and "stacktrace" in event:
        stacktraces = [event["stacktrace"]]
    culprit = ""
    if stacktraces:
        frame = _culprit_frame(stacktraces[-1]["frames"])
        culprit = _frame_culprit(frame, platform) if frame else ""
    culprit = culprit or event.get("request", {}).get("url") or event.get("culprit") or ""
    return _truncate(culprit, MAX_CULPRIT_CHARS) if culprit else None


def _message_text(event: dict[str, Any]) -> str:
    logentry: dict[str, Any] = event.get("logentry") or {}
    return str(logentry.get("formatted") or logentry.get("message") or "")


def _message_stack(exception: dict[str, Any], message: str) -> bool:
    """An exception made up to carry a captured message's stack: marked synthetic on a
    message event (@sentry/browser 8+), or without a type and valued as the message
    (@sentry/browser 7)."""
    if not message:
        return False
    if exception.get("mechanism", {}).get("synthetic") is True:
        return True
    return "type" not in exception and exception.get("value") == message


def _culprit_frame(frames: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Newest in-app frame, else the newest frame not marked as a library's (SDK and
    runtime frames are marked so by ``grouping.inapp``), else the newest frame (frames
    are oldest first)."""
    newest_first = frames[::-1]
    for frame in newest_first:
        if frame.get("in_app") is True:
            return frame
    for frame in newest_first:
        if frame.get("in_app") is not False:
            return frame
    return newest_first[0] if newest_first else None


def _frame_culprit(frame: dict[str, Any], platform: str) -> str:
    # The frame's own platform wins: an exception may cross platforms.
    platform = frame.get("platform") or platform
    function = frame.get("function") or "?"
    if platform in _NATIVE_PLATFORMS:
        return str(function)
    location = frame.get("module") or frame.get("filename")
    if not location:
        return ""
    if platform in _JS_PLATFORMS:
        return f"{function}({location})"
    return f"{location} in {function}"


def _user_key(user: dict[str, Any] | None) -> str | None:
    if not user:
        return None
    for field, prefix in (("id", "id"), ("email", "email"), ("username", "username")):
        if user.get(field):
            return f"{prefix}:{user[field]}"
    ip = user.get("ip_address")
    return f"ip:{ip}" if ip else None
