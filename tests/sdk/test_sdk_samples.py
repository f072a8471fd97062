"""Sanity checks of the real-SDK wire samples in tests/samples/ (fast, no network).

They guard the fixtures themselves: every sample decodes, every event id the
program printed is in a request, the two exception events of a run share the
same in-app stack (so they must group together), and sessions carry the release.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.sdk.run_programs import parse_envelope

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
SAMPLE_DIRS = (
    sorted(p for p in SAMPLES.iterdir() if p.is_dir() and p.name != "scenarios")
    if SAMPLES.is_dir()
    else []
)


def _decode(doc: dict[str, Any]) -> bytes:
    body = base64.b64decode(doc["body_b64"])
    enc = (
        next((v for k, v in doc["headers"] if k.lower() == "content-encoding"), "").strip().lower()
    )
    return gzip.decompress(body) if enc == "gzip" else body


def _load(
    sample_dir: Path,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[tuple[str, str]]]:
    """(events, session payloads, printed (kind, event_id)) of one sample directory."""
    events: list[dict[str, Any]] = []
    sessions: list[dict[str, Any]] = []
    for f in sorted(sample_dir.glob("*.json")):
        doc = json.loads(f.read_text())
        assert doc["method"] == "POST"
        assert doc["endpoint"] in ("store", "envelope")
        assert len(base64.b64decode(doc["body_b64"])) == doc["body_len"]
        body = _decode(doc)
        if doc["endpoint"] == "store":
            events.append(json.loads(body))
            continue
        header, items = parse_envelope(body)
        for item_header, payload in items:
            if item_header["type"] == "event":
                event = json.loads(payload)
                event.setdefault("event_id", header.get("event_id"))
                events.append(event)
            elif item_header["type"] in ("session", "sessions"):
                sessions.append(json.loads(payload))
    printed: list[tuple[str, str]] = []
    kind = ""
    for line in (sample_dir / "stdout.txt").read_text().splitlines():
        if line.startswith("kind="):
            kind = line[5:]
        elif line.startswith("event_id="):
            printed.append((kind, line[9:]))
    return events, sessions, printed


def _exception_values(event: dict[str, Any]) -> list[dict[str, Any]]:
    exc = event.get("exception")
    if exc is None:
        return []
    return exc if isinstance(exc, list) else exc.get("values", [])


def _in_app_functions(event: dict[str, Any]) -> list[str]:
    main = _exception_values(event)[-1]
    frames = (main.get("stacktrace") or {}).get("frames", [])
    return [str(f.get("function")) for f in frames if f.get("in_app")]


def test_samples_present() -> None:
    assert len(SAMPLE_DIRS) >= 12, SAMPLE_DIRS


@pytest.mark.parametrize("sample_dir", SAMPLE_DIRS, ids=[p.name for p in SAMPLE_DIRS])
def test_sample_set(sample_dir: Path) -> None:
    events, sessions, printed = _load(sample_dir)
    by_id = {str(e["event_id"]).replace("-", ""): e for e in events}
    for kind, event_id in printed:
        assert event_id in by_id, f"{kind} {event_id} not in the samples"
    exc_ids = [eid for kind, eid in printed if kind == "exception"]
    msg_ids = [eid for kind, eid in printed if kind == "message"]
    assert len(exc_ids) == 2 and len(msg_ids) == 1

    first, second = (by_id[i] for i in exc_ids)
    for event in (first, second):
        main = _exception_values(event)[-1]
        assert main.get("value") == "invalid quantity: 7"
        assert event["release"] == "sdk-test@1.0.0"
        assert event["environment"] == "test"
        assert event["user"]["id"] == "user-42"
    assert _exception_values(first)[-1].get("type") == _exception_values(second)[-1].get("type")
    functions = _in_app_functions(first)
    assert functions == _in_app_functions(second)
    assert any("validate" in f.lower() for f in functions), functions

    message = by_id[msg_ids[0]]
    text = message.get("message") or message.get("logentry")
    if isinstance(text, dict):
        text = text.get("formatted") or text.get("message")
    assert text == "tracebox sdk test message"
    assert message.get("level") == "warning"

    if "session" in (sample_dir / "stdout.txt").read_text():
        assert sessions, "program reported a session but none was captured"
        for s in sessions:
            assert s["attrs"]["release"] == "sdk-test@1.0.0"
