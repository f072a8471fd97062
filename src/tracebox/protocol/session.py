"""Release health: ``session`` items (one update) and ``sessions`` items (aggregates).

As Relay, an invalid session is dropped silently (sessions produce no outcome): the
readers return ``None`` / ``[]`` instead of raising. A field of the wrong type makes the
whole session invalid, as it does in Relay's strict deserializer.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from typing import Any, TypedDict

from tracebox.protocol._coerce import whole_number
from tracebox.protocol.timestamps import MAX_SECS_IN_FUTURE, parse_timestamp

MAX_SESSION_SECS_IN_PAST = 5 * 24 * 3600.0  # as Relay max_session_secs_in_past
MAX_AGGREGATES = 100  # aggregate buckets per sessions item, as the develop docs
MAX_RELEASE_CHARS = 200  # as Sentry's release name rules
MAX_ENVIRONMENT_CHARS = 64  # as Sentry's environment name rules
MAX_DID_CHARS = 256
DEFAULT_ENVIRONMENT = "production"  # as events without one
# `unhandled`: an unhandled error that did not crash the app (@sentry/browser 8+, .NET);
# terminal, counted as errored, as Relay.
STATUSES = frozenset({"ok", "exited", "crashed", "abnormal", "errored", "unhandled"})
_SEQ_LIMIT = 2**64 - 1  # Relay refuses seq == u64::MAX
_INVALID = object()


class SessionUpdate(TypedDict):
    sid: str
    did: str | None
    seq: int
    init: bool
    started: float
    timestamp: float
    duration: float | None
    status: str
    errors: int
    release: str
    environment: str


class SessionAggregate(TypedDict):
    started: float
    did: str | None
    exited: int
    errored: int
    crashed: int
    abnormal: int
    release: str
    environment: str


def normalize_session(
    raw: Any, *, received_at: float, client_ip: str | None = None
) -> SessionUpdate | None:
    """The update, or ``None`` when Relay would drop it: not an object, no valid
    ``attrs.release``, no ``started``, unknown status, a timestamp more than 60 s ahead or
    5 days behind ``received_at`` (as Relay's max_session_secs_in_past). A missing ``sid``
    is generated; ``seq`` defaults to now in ms and is 0 for the ``init`` update;
    ``timestamp`` defaults to ``received_at`` and is at least ``started``. ``client_ip`` is
    accepted for the design.md signature and unused: an update stores no address."""
    if not isinstance(raw, dict):
        return None
    names = _attrs(raw.get("attrs"))
    started = parse_timestamp(raw.get("started"))
    timestamp = _optional(raw, "timestamp", parse_timestamp, received_at)
    if names is None or started is None or timestamp is None or timestamp is _INVALID:
        return None
    timestamp = max(timestamp, started)
    init = _optional(raw, "init", _boolean, False)
    seq = 0 if init is True else _optional(raw, "seq", _count, int(received_at * 1000))
    fields = (
        _optional(raw, "sid", _sid, None) or str(uuid.uuid4()),
        _optional(raw, "did", _did, None),
        _optional(raw, "status", _status, "ok"),
        _optional(raw, "errors", _count, 0),
    )
    if _INVALID in (init, seq, *fields) or not _recent(started, timestamp, received_at=received_at):
        return None
    sid, did, status, errors = fields
    release, environment = names
    return SessionUpdate(
        sid=sid,
        did=did or None,
        seq=seq,
        init=init,
        started=started,
        timestamp=timestamp,
        duration=_duration(raw.get("duration")),
        status=status,
        errors=errors,
        release=release,
        environment=environment,
    )


def normalize_session_aggregates(
    raw: Any, *, received_at: float, client_ip: str | None = None
) -> list[SessionAggregate]:
    """The valid buckets among the first ``MAX_AGGREGATES`` of a ``sessions`` item; ``[]``
    when the item has no valid ``attrs.release`` or no ``aggregates`` list. A bucket with a
    bad count or a ``started`` out of range is dropped alone. ``client_ip`` is accepted for
    the design.md signature and unused."""
    if not isinstance(raw, dict) or not isinstance(raw.get("aggregates"), list):
        return []
    names = _attrs(raw.get("attrs"))
    if names is None:
        return []
    buckets = (_aggregate(item, names, received_at) for item in raw["aggregates"][:MAX_AGGREGATES])
    return [bucket for bucket in buckets if bucket is not None]


def _aggregate(raw: Any, names: tuple[str, str], received_at: float) -> SessionAggregate | None:
    if not isinstance(raw, dict):
        return None
    started = parse_timestamp(raw.get("started"))
    counts = [
        _optional(raw, key, _count, 0) for key in ("exited", "errored", "crashed", "abnormal")
    ]
    did = _optional(raw, "did", _did, None)
    if started is None or _INVALID in (did, *counts):
        return None
    if not _recent(started, received_at=received_at):
        return None
    exited, errored, crashed, abnormal = counts
    return SessionAggregate(
        started=started,
        did=did or None,
        exited=exited,
        errored=errored,
        crashed=crashed,
        abnormal=abnormal,
        release=names[0],
        environment=names[1],
    )


def _attrs(value: Any) -> tuple[str, str] | None:
    """(release, environment): the release must be valid; an invalid environment is
    replaced by the default (as Relay removes it)."""
    if not isinstance(value, dict) or not _valid_name(value.get("release"), MAX_RELEASE_CHARS):
        return None
    release: str = value["release"]
    environment = value.get("environment")
    if not _valid_name(environment, MAX_ENVIRONMENT_CHARS):
        return release, DEFAULT_ENVIRONMENT
    return release, str(environment)


def _valid_name(value: Any, max_chars: int) -> bool:
    """Sentry's rules for release and environment names: non-empty, bounded, no line
    breaks, tabs or slashes, not ``.``, ``..``, ``latest`` or ``None``."""
    if not isinstance(value, str) or not value.strip() or len(value) > max_chars:
        return False
    if value in (".", "..", "latest", "None"):
        return False
    return not any(c in value for c in "\n\r\t\f/\\")


def _recent(*times: float, received_at: float) -> bool:
    oldest = received_at - MAX_SESSION_SECS_IN_PAST
    newest = received_at + MAX_SECS_IN_FUTURE
    return all(oldest <= t <= newest for t in times)


def _optional(raw: dict[str, Any], key: str, read: Callable[[Any], Any], default: Any) -> Any:
    """``default`` when ``key`` is missing or null, else ``read(value)`` with ``None``
    meaning invalid (``_INVALID``)."""
    value = raw.get(key)
    if value is None:
        return default
    result = read(value)
    return _INVALID if result is None else result


def _boolean(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _count(value: Any) -> int | None:
    number = whole_number(value)
    return number if number is not None and 0 <= number < _SEQ_LIMIT else None


def _duration(value: Any) -> float | None:
    """Seconds, or ``None`` when missing or not a non-negative number (the update itself
    stays valid: the duration only feeds averages)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _sid(value: Any) -> str | None:
    """A UUID in its canonical form (Relay's ``sid`` is a UUID)."""
    try:
        return str(uuid.UUID(value)) if isinstance(value, str) else None
    except ValueError:
        return None


def _did(value: Any) -> str | None:
    return value[:MAX_DID_CHARS] if isinstance(value, str) else None


def _status(value: Any) -> str | None:
    return value if isinstance(value, str) and value in STATUSES else None
