"""Turn a store body or a framed envelope into spool records (CPU only, no I/O).

Only what must be decided before the 200 happens here: which items are kept, each
event's id (the ``id`` answered is the id stored), and a cheap check of each kept item
(its size, and that it looks like a JSON object). Payloads are spooled as received; the
digest parses and normalizes each one once (docs/design.md "Hot path"). So an event item
that looks like a JSON object but is not valid JSON is accepted here and counted as
invalid by the digest.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

from tracebox.config import Settings
from tracebox.errors import InvalidJson, MalformedEnvelope, PayloadTooLarge
from tracebox.ingest.items import SdkItems, looks_like_object, not_kept, record_count
from tracebox.protocol.envelope import Envelope, Item
from tracebox.protocol.event import new_event_id, parse_event_id
from tracebox.spool.record import COMPRESSED_BYTES, RecordKind, SentGzip, SpoolRecord

# Item types whose payload is an error event (the store endpoint's body, an envelope item).
EVENT_TYPES = frozenset({"event"})
SESSION_KINDS = {"session": RecordKind.SESSION, "sessions": RecordKind.SESSIONS}
# A store body of this type is a transaction: accepted, counted as not kept (spec 2.4).
TRANSACTION_EVENT_TYPE = "transaction"


MAX_CLIENT_CHARS = 200  # the client's name (``sentry_client`` or User-Agent) kept per event
# An event item is spooled as its gzip request body when the rest of the envelope (its
# headers and small items) is under this: at most one item of a body can be.
SENT_REST_BYTES = COMPRESSED_BYTES.start


@dataclass(frozen=True)
class Origin:
    """Who sent a request, and when it was received."""

    project_id: int
    key_id: int
    received: float
    client_ip: str | None
    # ``sentry_client`` of the auth, else the User-Agent: names the SDK of an event that
    # does not (old raven clients send no ``sdk``).
    client: str | None = None


@dataclass
class Accepted:
    """What one request produced: records to spool, and counts for metrics."""

    event_id: str | None = None
    records: list[SpoolRecord] = field(default_factory=list)
    events: int = 0
    dropped: Counter[str] = field(default_factory=Counter)

    def take_encoded(self) -> list[bytes]:
        """The records as the spool stores them, taken out of this result (which then
        holds none)."""
        encoded = [record.encode() for record in self.records]
        self.records = []
        return encoded


def count_events(envelope: Envelope) -> int:
    """Event items in ``envelope``, from their headers alone (for the rate limit)."""
    return sum(1 for item in envelope.items if item.type in EVENT_TYPES)


def process_store(body: bytes, origin: Origin, gzip_body: bytes | None = None) -> Accepted:
    """The store endpoint's body is parsed here: its event id and type are inside it.
    ``gzip_body``: the request body, when ``body`` is its gzip inflation; a body of 1 KiB to
    1 MiB is spooled as sent (``SentGzip``), not compressed again."""
    raw = _loads_object(body, "event")
    out = Accepted(event_id=parse_event_id(raw.get("event_id")))
    if raw.get("type") == TRANSACTION_EVENT_TYPE:
        out.dropped[TRANSACTION_EVENT_TYPE] += 1
    else:
        out.event_id = out.event_id or new_event_id()
        sent = SentGzip(gzip_body, 0) if gzip_body and len(body) in COMPRESSED_BYTES else None
        out.records.append(_record(RecordKind.EVENT, origin, body, out.event_id, sent))
        out.events = 1
    _add_dropped_record(out, origin)
    return out


def process_envelope(
    envelope: Envelope, settings: Settings, origin: Origin, gzip_body: bytes | None = None
) -> Accepted:
    """``gzip_body``: the request body, when it came as gzip alone; an event item that is
    nearly all of it is spooled as that body (``SentGzip``), not compressed again."""
    out = Accepted(event_id=parse_event_id(envelope.headers.get("event_id")))
    header_id = out.event_id
    sessions = 0
    sdk_items = SdkItems(settings, origin)  # attachments, feedback, client reports, logs
    for index, item in enumerate(envelope.items):
        kind = item.type
        if kind in EVENT_TYPES:
            event_id = _checked_event_id(item, index, header_id, settings.max_event_bytes)
            out.event_id = out.event_id or event_id
            sent = _sent(envelope, item, gzip_body)
            out.records.append(_record(RecordKind.EVENT, origin, item.payload, event_id, sent))
            out.events += 1
        elif kind in SESSION_KINDS:
            sessions += 1
            if sessions > settings.max_sessions_per_envelope:
                raise MalformedEnvelope(
                    f"more than {settings.max_sessions_per_envelope} session items"
                )
            _add_session(out, item, origin, settings.max_session_bytes)
        elif not sdk_items.add(item):
            out.dropped[not_kept(kind)] += record_count(item)  # a span container: its spans
    sdk_items.finish(out.event_id)
    out.records += sdk_items.records
    out.dropped.update(sdk_items.dropped)
    _add_dropped_record(out, origin)
    return out


def _sent(envelope: Envelope, item: Item, gzip_body: bytes | None) -> SentGzip | None:
    if gzip_body is None or item.offset is None or envelope.size is None:
        return None
    size = len(item.payload)
    if size not in COMPRESSED_BYTES or envelope.size - size >= SENT_REST_BYTES:
        return None
    return SentGzip(gzip_body, item.offset)


def _checked_event_id(item: Item, index: int, header_id: str | None, limit: int) -> str:
    """The id of an event item, after its cheap checks: the envelope's ``event_id`` wins
    (as Relay); without one, the item is parsed for its own; else a new id is made."""
    if len(item.payload) > limit:
        raise PayloadTooLarge(
            f"item {index} ({item.type}) is {len(item.payload)} bytes; the limit is {limit}"
        )
    what = f"item {index} (event)"
    if not looks_like_object(item.payload):
        raise InvalidJson(f"{what} must be a JSON object")
    if header_id is not None:
        return header_id
    return parse_event_id(_loads_object(item.payload, what).get("event_id")) or new_event_id()


def _loads_object(payload: bytes, what: str) -> dict[str, Any]:
    try:
        data = orjson.loads(payload)
    except orjson.JSONDecodeError as e:
        raise InvalidJson(f"invalid JSON in {what}: {e}") from e
    if not isinstance(data, dict):
        raise InvalidJson(f"{what} must be a JSON object")
    return data


def _add_session(out: Accepted, item: Item, origin: Origin, limit: int) -> None:
    # Sessions are dropped silently when invalid, as Relay does: never fail the envelope.
    # Their content is checked by the digest, which counts those it drops.
    if len(item.payload) > limit:
        out.dropped[f"{item.type}_too_large"] += 1
    elif not looks_like_object(item.payload):
        out.dropped[f"{item.type}_invalid"] += 1
    else:
        out.records.append(_record(SESSION_KINDS[item.type], origin, item.payload))


def _add_dropped_record(out: Accepted, origin: Origin) -> None:
    if out.dropped:
        payload = orjson.dumps(dict(out.dropped))
        out.records.append(_record(RecordKind.DROPPED, origin, payload))


def _record(
    kind: RecordKind,
    origin: Origin,
    payload: bytes,
    event_id: str | None = None,
    sent: SentGzip | None = None,
) -> SpoolRecord:
    event = kind is RecordKind.EVENT
    return SpoolRecord(
        kind=kind,
        project_id=origin.project_id,
        key_id=origin.key_id,
        received=origin.received,
        payload=payload,
        client_ip=origin.client_ip if event else None,
        event_id=event_id,
        headers={"client": origin.client[:MAX_CLIENT_CHARS]} if event and origin.client else {},
        sent=sent,
    )
