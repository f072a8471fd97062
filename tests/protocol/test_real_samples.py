"""Every request of ``tests/samples`` (real SDKs, see its README) goes through the protocol
steps: credentials, decompression, store decoding or envelope framing, normalizing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tracebox.protocol.event import summarize

from .real_samples import printed_event_ids, programs, receive_program

PUBLIC_KEY = "0123456789abcdef0123456789abcdef"
MESSAGE = "tracebox sdk test message"
CULPRIT = re.compile(r"validate_?quantity", re.IGNORECASE)

pytestmark = pytest.mark.skipif(not programs(), reason="tests/samples is missing")


@pytest.mark.parametrize("program", programs(), ids=lambda path: path.name)
def test_every_request_is_understood(program: Path) -> None:
    received = receive_program(program)
    assert {auth.public_key for auth in received.auths} == {PUBLIC_KEY}
    assert set(printed_event_ids(program)) <= {event["event_id"] for event in received.events}
    for event in received.events:
        summary = summarize(event)
        assert (summary.user_key, summary.release, summary.environment) == (
            "id:user-42",
            "sdk-test@1.0.0",
            "test",
        )
        if event["level"] == "warning":
            assert event["logentry"]["formatted"] == MESSAGE
        else:
            assert summary.title.endswith(": invalid quantity: 7"), summary.title
            assert summary.culprit is not None and CULPRIT.search(summary.culprit), summary.culprit


@pytest.mark.parametrize("program", programs(), ids=lambda path: path.name)
def test_message_events_are_titled_by_their_message(program: Path) -> None:
    messages = [summarize(e) for e in receive_program(program).events if e["level"] == "warning"]
    assert messages
    for summary in messages:
        # @sentry/node 11 attaches a synthetic exception to messages: still titled by the text.
        assert summary.title == MESSAGE


@pytest.mark.parametrize("program", programs(), ids=lambda path: path.name)
def test_sessions_are_valid(program: Path) -> None:
    received = receive_program(program)
    assert None not in received.sessions
    updates = [s for s in received.sessions if s is not None]
    assert all(s["release"] == "sdk-test@1.0.0" and s["environment"] == "test" for s in updates)
    if updates:
        assert updates[0]["init"] and updates[0]["seq"] == 0
        assert any(s["status"] == "exited" for s in updates)
    buckets = [bucket for item in received.aggregates for bucket in item]
    assert len(buckets) == len(received.aggregates)  # one bucket per item in these runs
    assert all(b["exited"] + b["errored"] + b["crashed"] + b["abnormal"] >= 1 for b in buckets)
