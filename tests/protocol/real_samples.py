"""Read the real SDK requests of ``tests/samples`` (see its README) and run them through
the protocol steps ingest takes. Shared by the tests; no server involved."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson

from tracebox.protocol.auth import SentryAuth, auth_from_envelope_dsn, auth_from_request, merge_auth
from tracebox.protocol.decoding import decode_store_body, decompress
from tracebox.protocol.envelope import parse_envelope
from tracebox.protocol.event import normalize_event
from tracebox.protocol.session import (
    SessionAggregate,
    SessionUpdate,
    normalize_session,
    normalize_session_aggregates,
)
from tracebox.protocol.timestamps import parse_timestamp

SAMPLES = Path(__file__).parent.parent / "samples"
MAX_BYTES = 20 * 1024 * 1024


@dataclass
class Received:
    """What one program sent, after the protocol steps."""

    auths: list[SentryAuth] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    sessions: list[SessionUpdate | None] = field(default_factory=list)
    aggregates: list[list[SessionAggregate]] = field(default_factory=list)
    other_items: list[str] = field(default_factory=list)


SCENARIOS = SAMPLES / "scenarios"  # single cases, not the standard program run


def programs() -> list[Path]:
    """The standard program runs (see the README's "What each program sent")."""
    if not SAMPLES.is_dir():
        return []
    return sorted(path for path in SAMPLES.iterdir() if path.is_dir() and path != SCENARIOS)


def scenarios() -> list[Path]:
    return sorted(path for path in SCENARIOS.iterdir() if path.is_dir())


def printed_event_ids(program: Path) -> list[str]:
    lines = (program / "stdout.txt").read_text().splitlines()
    return [line.split("=", 1)[1] for line in lines if line.startswith("event_id=")]


def receive_program(program: Path) -> Received:
    received = Received()
    for path in sorted(program.glob("*.json")):
        receive_request(json.loads(path.read_text()), received)
    return received


def receive_request(sample: dict[str, Any], received: Received) -> None:
    url = urlsplit(sample["path"])
    headers = dict(sample["headers"])  # case kept as on the wire
    auth = auth_from_request(headers, dict(parse_qsl(url.query)))
    encoding = next((v for k, v in sample["headers"] if k.lower() == "content-encoding"), None)
    body = decompress(base64.b64decode(sample["body_b64"]), encoding, max_bytes=MAX_BYTES)
    if sample["endpoint"] == "store":
        assert auth is not None
        received.auths.append(auth)
        payload = orjson.loads(decode_store_body(body, max_bytes=MAX_BYTES))
        received.events.append(_event(payload, None))
        return
    envelope = parse_envelope(body, max_items=100)
    if "dsn" in envelope.headers:
        dsn_auth, project_id = auth_from_envelope_dsn(envelope.headers["dsn"])
        assert project_id == "42"
        auth = merge_auth([a for a in (auth, dsn_auth) if a is not None])
    assert auth is not None
    received.auths.append(auth)
    for item in envelope.items:
        _receive_item(item.type, orjson.loads(item.payload), envelope.headers, received)


def _receive_item(
    item_type: str, payload: Any, headers: dict[str, Any], received: Received
) -> None:
    if item_type == "event":
        received.events.append(_event(payload, headers.get("event_id")))
    elif item_type == "session":
        received.sessions.append(normalize_session(payload, received_at=_time_of(payload)))
    elif item_type == "sessions":
        received.aggregates.append(
            normalize_session_aggregates(payload, received_at=_time_of(payload))
        )
    else:
        received.other_items.append(item_type)


def _event(payload: Any, event_id: str | None) -> dict[str, Any]:
    return normalize_event(
        payload, received_at=_time_of(payload), client_ip="127.0.0.1", event_id=event_id
    )


def _time_of(payload: dict[str, Any]) -> float:
    """A receive time just after the payload's own time, so that clamping keeps it."""
    starts = [a.get("started") for a in payload.get("aggregates", []) if isinstance(a, dict)]
    for candidate in (payload.get("timestamp"), payload.get("started"), *starts):
        seconds = parse_timestamp(candidate)
        if seconds is not None:
            return seconds + 1.0
    raise AssertionError("sample payload without a time")
