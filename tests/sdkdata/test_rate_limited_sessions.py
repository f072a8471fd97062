"""Issue 12, item 3 (built by the storage engineer's per-category limits): an envelope
limited for events keeps its session. The envelope is the one sentry-rust 0.49.5 sent
(its first event with the session's first update, tests/samples/rust-0.49.5), replayed
after the client key used up its events."""

from __future__ import annotations

import base64
import dataclasses
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from tests.ingest.conftest import Ingest, make_ingest
from tracebox.config import Settings
from tracebox.protocol.envelope import parse_envelope
from tracebox.store import Database

SAMPLE = Path(__file__).parents[1] / "samples" / "rust-0.49.5" / "01-envelope.json"


@pytest.fixture
def limited(settings: Settings, db: Database) -> Iterator[Ingest]:
    # The limit counts per minute of the clock: one that stands still, so the minute
    # cannot end between the requests that fill it and the one it refuses.
    limited = dataclasses.replace(settings, rate_limit_events_per_minute=1)
    yield from make_ingest(limited, db, limits_at=time.time())


def rust_first_envelope() -> bytes:
    """The real envelope, its session's times moved to now (a session older than five
    days is dropped, as Relay), everything else byte for byte."""
    body = base64.b64decode(json.loads(SAMPLE.read_text())["body_b64"])
    parsed = parse_envelope(body, max_items=10)
    assert [i.type for i in parsed.items] == ["event", "session"]
    lines = [orjson.dumps(parsed.headers)]
    now = datetime.now(UTC).isoformat()
    for item in parsed.items:
        payload = item.payload
        if item.type == "session":
            session = {**orjson.loads(payload), "started": now, "timestamp": now}
            payload = orjson.dumps(session)
        lines += [orjson.dumps({**item.headers, "length": len(payload)}), payload]
    return b"\n".join(lines) + b"\n"


def test_an_envelope_limited_for_events_keeps_its_session(limited: Ingest) -> None:
    used = limited.client.post(
        limited.url("store"), content=orjson.dumps({"message": "first"}), headers=limited.auth()
    )
    assert used.status_code == 200
    r = limited.client.post(
        limited.url("envelope"), content=rust_first_envelope(), headers=limited.auth()
    )
    assert r.status_code == 200, r.text  # not 429: the session was accepted
    assert "error" in r.headers["x-sentry-rate-limits"].split(":")[1].split(";")
    counts = limited.counts()
    assert (counts["events"], counts["sessions"]) == (1, 1)
