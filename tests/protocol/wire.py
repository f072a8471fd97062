"""Helpers for the hand-built SDK wire shapes: the protocol steps ingest takes, in order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from tracebox.protocol.auth import SentryAuth, auth_from_envelope_dsn, auth_from_request, merge_auth
from tracebox.protocol.decoding import decompress
from tracebox.protocol.envelope import Envelope, parse_envelope
from tracebox.protocol.event import normalize_event

KEY = "e12d836b15bb49d7bbf99e64295d995b"
DSN = f"https://{KEY}@errors.example.com/api/v4/error_tracking/collector/42"
NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z
EVENT_ID = "9ec79c33ec9942ab8353589fcb2e04dc"
MAX = 1024 * 1024
GO_AUTH = (
    "Sentry sentry_version=7, sentry_timestamp=1699999999, "
    f"sentry_client=sentry.go/0.20.0, sentry_key={KEY}"
)


@dataclass
class Request:
    headers: dict[str, str]
    body: bytes
    query: dict[str, str] = field(default_factory=dict)


def received(request: Request) -> tuple[SentryAuth | None, bytes]:
    auth = auth_from_request(request.headers, request.query)
    encoding = next(
        (v for k, v in request.headers.items() if k.lower() == "content-encoding"), None
    )
    return auth, decompress(request.body, encoding, max_bytes=MAX)


def envelope_of(request: Request) -> tuple[SentryAuth | None, Envelope]:
    auth, body = received(request)
    envelope = parse_envelope(body, max_items=100)
    if "dsn" in envelope.headers:
        dsn_auth, project_id = auth_from_envelope_dsn(envelope.headers["dsn"])
        assert project_id == "42"
        auth = merge_auth([a for a in (auth, dsn_auth) if a is not None])
    return auth, envelope


def event_of(envelope: Envelope, item_type: str = "event") -> dict[str, Any]:
    item = next(i for i in envelope.items if i.type == item_type)
    header_id = envelope.headers.get("event_id")
    return normalize_event(
        orjson.loads(item.payload), received_at=NOW, client_ip="192.0.2.1", event_id=header_id
    )
