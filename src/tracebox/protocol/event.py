"""Any SDK's event payload to the one canonical shape of docs/design.md "Normalized event".

``normalize_event`` is on the digest's hot path (every event, once): it builds a new
top-level object, keeps nested objects it does not need to clean (``extra``,
``contexts``, frame ``vars``, frames and frame lists already clean...) by reference, so
the result shares them with ``raw``, and never raises on a JSON object, whatever it holds.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from tracebox.errors import InvalidJson
from tracebox.protocol._coerce import text
from tracebox.protocol.attributes import (
    normalize_fingerprint,
    normalize_request,
    normalize_tags,
    normalize_user,
)
from tracebox.protocol.interfaces import (
    normalize_breadcrumbs,
    normalize_exceptions,
    normalize_stacktrace,
    normalize_threads,
)
from tracebox.protocol.levels import normalize_level
from tracebox.protocol.logentry import normalize_logentry
from tracebox.protocol.summary import EventSummary, summarize
from tracebox.protocol.timestamps import clamp_timestamp, parse_timestamp

__all__ = ["EventSummary", "new_event_id", "normalize_event", "parse_event_id", "summarize"]

MAX_NAME_CHARS = 200  # release, transaction and the like: as Relay's tag-value bound
DEFAULT_ENVIRONMENT = "production"  # as the develop docs, when the SDK sends none

_NAMES = ("logger", "transaction", "server_name", "release", "dist", "culprit")
_OBJECTS = ("contexts", "extra", "modules", "sdk", "debug_meta")  # debug_meta: source maps
_HEX = frozenset("0123456789abcdef")

_Reader = Callable[[Any], dict[str, Any] | None]
_INTERFACES: tuple[tuple[str, tuple[str, ...], _Reader], ...] = (
    ("exception", ("exception", "sentry.interfaces.Exception"), normalize_exceptions),
    ("threads", ("threads",), normalize_threads),
    ("stacktrace", ("stacktrace", "sentry.interfaces.Stacktrace"), normalize_stacktrace),
    ("request", ("request", "sentry.interfaces.Http"), normalize_request),
)


def normalize_event(
    raw: Any, *, received_at: float, client_ip: str | None, event_id: str | None = None
) -> dict[str, Any]:
    """The canonical event for ``raw``; ``InvalidJson`` if ``raw`` is not a JSON object.

    A valid ``event_id`` (from the envelope header) wins over the payload's, as Relay.
    Always present: ``event_id timestamp received platform level environment tags``; every
    other key only when the SDK sent something usable for it.
    """
    if not isinstance(raw, dict):
        raise InvalidJson("event payload must be a JSON object")
    received = float(received_at)
    timestamp = clamp_timestamp(parse_timestamp(raw.get("timestamp")), received)
    event: dict[str, Any] = {
        "event_id": parse_event_id(event_id)
        or parse_event_id(raw.get("event_id"))
        or new_event_id(),
        "timestamp": timestamp,
        "received": received,
        "platform": text(raw.get("platform"), 64) or "other",
        "level": normalize_level(raw.get("level"), "error"),
        "environment": text(raw.get("environment"), MAX_NAME_CHARS) or DEFAULT_ENVIRONMENT,
        "tags": normalize_tags(raw.get("tags")),
    }
    for key in _NAMES:
        if key in raw:
            value = raw[key]
            # text()'s first case, a string (cut), inline: names are strings as a rule.
            name = value[:MAX_NAME_CHARS] if type(value) is str else text(value, MAX_NAME_CHARS)
            if name:
                event[key] = name
    _set(event, "logentry", normalize_logentry(raw))
    for key, sources, reader in _INTERFACES:
        _set(event, key, reader(_first(raw, sources)))
    _set(event, "breadcrumbs", normalize_breadcrumbs(raw.get("breadcrumbs"), timestamp))
    _set(event, "user", normalize_user(_first(raw, ("user", "sentry.interfaces.User")), client_ip))
    _set(event, "fingerprint", normalize_fingerprint(raw.get("fingerprint")))
    for key in _OBJECTS:
        if isinstance(raw.get(key), dict):
            event[key] = raw[key]
    return event


def parse_event_id(value: Any) -> str | None:
    """32 lowercase hex digits from a UUID with or without dashes, any case; else None."""
    if not isinstance(value, str):
        return None
    hex_id = value.replace("-", "").lower()
    return hex_id if len(hex_id) == 32 and _HEX.issuperset(hex_id) else None


def new_event_id() -> str:
    """The id given to an event sent without a valid one."""
    return uuid.uuid4().hex


def _first(raw: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The value of the first of ``keys`` present: the modern name, then legacy aliases."""
    for key in keys:
        value = raw.get(key)
        if value is not None:
            return value
    return None


def _set(event: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        event[key] = value
