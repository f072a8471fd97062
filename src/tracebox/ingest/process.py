"""Turn a decoded store body or envelope into spool records (CPU only, no I/O)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

from tracebox.config import Settings
from tracebox.errors import InvalidJson, MalformedEnvelope, PayloadTooLarge
from tracebox.protocol.envelope import Envelope, Item
from tracebox.protocol.event import normalize_event
from tracebox.protocol.session import normalize_session, normalize_session_aggregates

# Item types whose payload is an error event (the store endpoint's body, an envelope item).
EVENT_TYPES = frozenset({"event"})
# Items the integrated backend does not keep (spec 2.4): accepted, counted, dropped.
TRANSACTION_EVENT_TYPE = "transaction"


@dataclass
class Accepted:
    """What one request produced: records to spool, and counts for metrics."""

    event_id: str | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    events: int = 0
    dropped: Counter[str] = field(default_factory=Counter)


def _loads_object(payload: bytes, what: str) -> dict[str, Any]:
    try:
        data = orjson.loads(payload)
    except orjson.JSONDecodeError as e:
        raise InvalidJson(f"invalid JSON in {what}: {e}") from e
    if not isinstance(data, dict):
        raise InvalidJson(f"{what} must be a JSON object")
    return data


def process_store(
    body: bytes, *, project_id: int, key_id: int, received: float, client_ip: str | None
) -> Accepted:
    raw = _loads_object(body, "event")
    out = Accepted()
    if raw.get("type") == TRANSACTION_EVENT_TYPE:
        out.dropped[TRANSACTION_EVENT_TYPE] += 1
        out.event_id = _event_id_of(raw)
    else:
        event = normalize_event(raw, received_at=received, client_ip=client_ip)
        out.event_id = event["event_id"]
        out.records.append(_record("event", project_id, key_id, received, event))
        out.events = 1
    _add_dropped_record(out, project_id, key_id, received)
    return out


def process_envelope(
    envelope: Envelope,
    settings: Settings,
    *,
    project_id: int,
    key_id: int,
    received: float,
    client_ip: str | None,
) -> Accepted:
    out = Accepted(event_id=_event_id_of(envelope.headers))
    sessions = 0
    for index, item in enumerate(envelope.items):
        kind = item.type
        if kind in EVENT_TYPES:
            _check_size(item, settings.max_event_bytes, index)
            raw = _loads_object(item.payload, f"item {index} (event)")
            event = normalize_event(
                raw, received_at=received, client_ip=client_ip, event_id=out.event_id
            )
            out.event_id = out.event_id or event["event_id"]
            out.records.append(_record("event", project_id, key_id, received, event))
            out.events += 1
        elif kind in ("session", "sessions"):
            sessions += 1
            if sessions > settings.max_sessions_per_envelope:
                raise MalformedEnvelope(
                    f"more than {settings.max_sessions_per_envelope} session items"
                )
            _add_session(out, item, project_id, key_id, received)
        else:
            out.dropped[kind] += 1
    _add_dropped_record(out, project_id, key_id, received)
    return out


def _check_size(item: Item, limit: int, index: int) -> None:
    if len(item.payload) > limit:
        raise PayloadTooLarge(
            f"item {index} ({item.type}) is {len(item.payload)} bytes; the limit is {limit}"
        )


def _add_session(out: Accepted, item: Item, project_id: int, key_id: int, received: float) -> None:
    # Sessions are dropped silently when invalid, as Relay does: never fail the envelope.
    try:
        raw = orjson.loads(item.payload)
    except orjson.JSONDecodeError:
        out.dropped[f"{item.type}_invalid"] += 1
        return
    if item.type == "session":
        update = normalize_session(raw, received_at=received)
        if update is not None:
            out.records.append(_record("session", project_id, key_id, received, dict(update)))
            return
    else:
        aggregates = normalize_session_aggregates(raw, received_at=received)
        if aggregates:
            payload = [dict(a) for a in aggregates]
            out.records.append(_record("sessions", project_id, key_id, received, payload))
            return
    out.dropped[f"{item.type}_invalid"] += 1


def _add_dropped_record(out: Accepted, project_id: int, key_id: int, received: float) -> None:
    if out.dropped:
        out.records.append(_record("dropped", project_id, key_id, received, dict(out.dropped)))


def _record(
    kind: str, project_id: int, key_id: int, received: float, payload: Any
) -> dict[str, Any]:
    return {
        "kind": kind,
        "project_id": project_id,
        "key_id": key_id,
        "received": received,
        "payload": payload,
    }


def _event_id_of(headers: dict[str, Any]) -> str | None:
    value = headers.get("event_id")
    if isinstance(value, str):
        hexed = value.replace("-", "").lower()
        if len(hexed) == 32 and all(c in "0123456789abcdef" for c in hexed):
            return hexed
    return None
