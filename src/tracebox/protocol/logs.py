"""``log`` items: containers of structured log records (``application/vnd.sentry.items.log+json``),
sent by sentry-python with ``enable_logs``, ``Sentry.logger`` of the JavaScript SDKs and
sentry-go's slog handler. Pure.

A container is ``{"items": [record, ...]}``; a record is ``{timestamp, trace_id?,
span_id?, level, severity_number?, body, attributes: {key: {value, type}}}``: timestamps
are float seconds (Python, JavaScript) or RFC 3339 (Go), levels ``trace debug info warn
error fatal``. Every value is bounded; a record without a body is dropped alone.

A record at level error or fatal that carries an error value (Go's slog ``error`` /
``err`` attribute, OpenTelemetry's ``exception.message``) also becomes an error event
(``error_event``), so that slog users, whose SDK sends nothing else, find it in the
error list.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from tracebox.protocol._coerce import text
from tracebox.protocol.timestamps import clamp_timestamp, parse_timestamp

MAX_RECORDS_PER_ITEM = 1000  # the Python SDK drops past 1,000 queued records
MAX_BODY_CHARS = 8192  # as an event message (Relay's message limit)
MAX_ATTRIBUTES = 100  # per record
MAX_KEY_CHARS = 200
MAX_VALUE_CHARS = 1024  # a string attribute, as Relay's attribute value limit
MAX_NAME_CHARS = 200  # release, environment, logger
LEVELS = ("trace", "debug", "info", "warn", "error", "fatal")
_LEVEL_ALIASES = {"warning": "warn", "critical": "fatal", "log": "info"}
ERROR_LEVELS = ("error", "fatal")
# Attributes naming the error a record is about, most specific first.
ERROR_VALUE_KEYS = ("exception.message", "error", "err")
_HEX = frozenset("0123456789abcdef")
# Platforms of the SDKs that send logs, by ``sentry.sdk.name``.
_PLATFORMS = {"sentry.go": "go", "sentry.python": "python", "sentry.javascript.node": "node"}


@dataclass(frozen=True)
class LogRecord:
    timestamp: float  # unix seconds
    level: str  # one of LEVELS
    severity_number: int | None
    body: str
    trace_id: str | None  # 32 lowercase hex
    span_id: str | None  # 16 lowercase hex
    attributes: dict[str, Any]  # plain values: string, number, boolean or a list of them

    @property
    def release(self) -> str | None:
        return self._name("sentry.release")

    @property
    def environment(self) -> str | None:
        return self._name("sentry.environment")

    @property
    def logger(self) -> str | None:
        """``logger.name`` (Python's logging), else ``sentry.origin`` (``auto.log.slog``)."""
        return self._name("logger.name") or self._name("sentry.origin")

    @property
    def error_value(self) -> str | None:
        """The error an error-level record is about, if it names one."""
        if self.level not in ERROR_LEVELS:
            return None
        return next(filter(None, (self._name(k, MAX_VALUE_CHARS) for k in ERROR_VALUE_KEYS)), None)

    def _name(self, key: str, limit: int = MAX_NAME_CHARS) -> str | None:
        value = self.attributes.get(key)
        return value[:limit] if isinstance(value, str) and value.strip() else None


def normalize_logs(raw: Any, *, received_at: float) -> list[LogRecord]:
    """The valid records of a container, at most ``MAX_RECORDS_PER_ITEM``; timestamps
    clamped as an event's (missing, too far ahead or behind: ``received_at``)."""
    items = raw.get("items") if isinstance(raw, dict) else None
    if not isinstance(items, list):
        return []
    records = (_record(item, received_at) for item in items[:MAX_RECORDS_PER_ITEM])
    return [r for r in records if r is not None]


def _record(raw: Any, received_at: float) -> LogRecord | None:
    if not isinstance(raw, dict):
        return None
    body = text(raw.get("body"), MAX_BODY_CHARS)
    if body is None:
        return None
    severity = raw.get("severity_number")
    number = severity if type(severity) is int and 1 <= severity <= 24 else None
    return LogRecord(
        timestamp=clamp_timestamp(parse_timestamp(raw.get("timestamp")), received_at),
        level=_level(raw.get("level"), number),
        severity_number=number,
        body=body,
        trace_id=_hex_id(raw.get("trace_id"), 32),
        span_id=_hex_id(raw.get("span_id"), 16),
        attributes=dict(_attributes(raw.get("attributes"))),
    )


def _level(value: Any, severity: int | None) -> str:
    """The record's level; else from its OpenTelemetry severity number (1-4 trace, 5-8
    debug, ... 21-24 fatal); else info."""
    if isinstance(value, str):
        name = value.strip().lower()
        name = _LEVEL_ALIASES.get(name, name)
        if name in LEVELS:
            return name
    return LEVELS[(severity - 1) // 4] if severity is not None else "info"


def _hex_id(value: Any, length: int) -> str | None:
    if not isinstance(value, str):
        return None
    hex_id = value.replace("-", "").lower()
    if len(hex_id) != length or not _HEX.issuperset(hex_id) or not hex_id.strip("0"):
        return None  # the all-zero id means "no trace"
    return hex_id


def _attributes(raw: Any) -> Iterator[tuple[str, Any]]:
    """``{key: {value, type}}`` (the protocol) or ``{key: value}`` as plain values."""
    if not isinstance(raw, dict):
        return
    for key, wrapped in list(raw.items())[:MAX_ATTRIBUTES]:
        value = wrapped.get("value") if isinstance(wrapped, dict) else wrapped
        plain = _plain(value)
        if plain is not None:
            yield str(key)[:MAX_KEY_CHARS], plain


def _plain(value: Any) -> Any:
    if isinstance(value, str):
        return value[:MAX_VALUE_CHARS]
    if isinstance(value, bool) or (isinstance(value, int) and abs(value) < 2**63):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list):
        items = [_plain(v) for v in value[:MAX_ATTRIBUTES] if not isinstance(v, list | dict)]
        return [v for v in items if v is not None]
    return None


def error_event(record: LogRecord) -> dict[str, Any] | None:
    """The error event a record at level error/fatal with an error value stands for (an
    SDK event payload, for ``normalize_event``), or None. Its id derives from the record,
    so the same record always makes the same event; its trace ties it to the record."""
    error = record.error_value
    if error is None:
        return None
    attrs = record.attributes
    exc_type = attrs.get("exception.type")
    has_type = isinstance(exc_type, str) and bool(exc_type.strip())
    exception = {
        "value": error,
        "mechanism": {"type": "log", "handled": True, "synthetic": not has_type},
        **({"type": exc_type} if has_type else {}),
    }
    template = attrs.get("sentry.message.template")
    event: dict[str, Any] = {
        "event_id": _event_id(record),
        "timestamp": record.timestamp,
        "level": record.level if record.level == "fatal" else "error",
        "platform": _PLATFORMS.get(str(attrs.get("sentry.sdk.name")), "other"),
        "logentry": {"formatted": record.body},
        "exception": {"values": [exception]},
        "extra": {k: v for k, v in attrs.items() if not k.startswith("sentry.")},
        # Grouped by the log statement and its error, not by the error's text alone.
        "fingerprint": ["{{ default }}", template if isinstance(template, str) else record.body],
    }
    names = {
        "logger": record.logger,
        "release": record.release,
        "environment": record.environment,
        "server_name": attrs.get("sentry.server.address"),
        "culprit": _code_location(attrs),
    }
    event.update({k: v for k, v in names.items() if isinstance(v, str) and v})
    if record.trace_id is not None:
        trace = {"trace_id": record.trace_id, "span_id": record.span_id}
        event["contexts"] = {"trace": {k: v for k, v in trace.items() if v}}
    sdk = {"name": attrs.get("sentry.sdk.name"), "version": attrs.get("sentry.sdk.version")}
    if isinstance(sdk["name"], str):
        event["sdk"] = {k: v for k, v in sdk.items() if isinstance(v, str)}
    return event


def _code_location(attrs: dict[str, Any]) -> str | None:
    where = attrs.get("code.file.path") or attrs.get("code.filepath")
    function = attrs.get("code.function.name") or attrs.get("code.function")
    if isinstance(where, str) and isinstance(function, str):
        return f"{where} in {function}"
    return function if isinstance(function, str) else None


def _event_id(record: LogRecord) -> str:
    identity = [record.timestamp, record.level, record.body, record.trace_id, record.span_id]
    data = orjson.dumps([*identity, record.attributes], option=orjson.OPT_SORT_KEYS)
    return hashlib.md5(data, usedforsecurity=False).hexdigest()
