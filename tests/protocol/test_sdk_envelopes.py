"""SDKs that send errors in envelopes (reference section 9): sentry-java 6.18.1,
@sentry/node 7.38.0, sentry-ruby 5.9.0, sentry-rust 0.31.0, and the installed sentry-sdk."""

from __future__ import annotations

import gzip
from typing import Any

import orjson
import pytest

from tracebox.protocol.auth import SentryAuth
from tracebox.protocol.envelope import parse_envelope
from tracebox.protocol.event import summarize
from tracebox.protocol.session import normalize_session, normalize_session_aggregates

from .wire import DSN, EVENT_ID, KEY, NOW, Request, envelope_of, event_of


def test_java_gzip_envelope_with_message_object() -> None:
    payload = orjson.dumps(
        {
            "timestamp": "2023-11-14T22:13:19.500Z",
            "level": "info",
            "platform": "java",
            "message": {
                "formatted": "Order 17 failed",
                "message": "Order {} failed",
                "params": ["17"],
            },
            "logger": "com.example.Shop",
            "release": "shop@2.0",
            "environment": "prod",
            "threads": [{"id": 1, "name": "main", "current": True}],
        }
    )
    plain = (
        b'{"event_id":"%s","sdk":{"name":"sentry.java","version":"6.18.1"}}\n' % EVENT_ID.encode()
        + b'{"type":"event","length":%d,"content_type":"application/json"}\n' % len(payload)
        + payload
        + b"\n"
    )
    header = f"Sentry sentry_version=7,sentry_client=sentry.java/6.18.1,sentry_key={KEY}"
    headers = {
        "X-Sentry-Auth": header,
        "Content-Encoding": "gzip",
        "Content-Type": "application/x-sentry-envelope",
    }
    auth, envelope = envelope_of(Request(headers, gzip.compress(plain)))
    assert auth == SentryAuth(KEY, None, 7, "sentry.java/6.18.1")
    event = event_of(envelope)
    assert event["logentry"] == {
        "message": "Order {} failed",
        "params": ["17"],
        "formatted": "Order 17 failed",
    }
    assert (event["timestamp"], event["level"], event["logger"]) == (
        NOW - 0.5,
        "info",
        "com.example.Shop",
    )
    assert event["threads"] == {"values": [{"id": 1, "name": "main", "current": True}]}
    assert summarize(event).title == "Order 17 failed"


def test_node_envelope_without_lengths_and_query_auth() -> None:
    event = orjson.dumps(
        {
            "event_id": EVENT_ID,
            "timestamp": NOW - 1.25,
            "platform": "node",
            "level": "error",
            "exception": {
                "values": [
                    {
                        "type": "TypeError",
                        "value": "x is undefined",
                        "mechanism": {"type": "onuncaughtexception", "handled": False},
                        "stacktrace": {
                            "frames": [
                                {
                                    "filename": "/app/server.js",
                                    "function": "handle",
                                    "in_app": True,
                                    "lineno": 3,
                                    "colno": 9,
                                }
                            ]
                        },
                    }
                ]
            },
            "breadcrumbs": [
                {"timestamp": NOW - 3.5, "category": "console", "message": "hi", "level": "log"}
            ],
            "request": {"url": "http://localhost/x", "headers": {"host": "localhost"}},
        }
    )
    session = b'{"sid":"7c7b6585-f901-4351-bf8d-02711b721929","init":true,'
    session += b'"started":"2023-11-14T22:13:00.000Z",'
    session += b'"timestamp":"2023-11-14T22:13:19.000Z","status":"ok","errors":1,"duration":19,'
    session += b'"attrs":{"release":"web@1.2.3","environment":"production"}}'
    body = b'{"event_id":"%s","sent_at":"2023-11-14T22:13:20.000Z"}\n' % EVENT_ID.encode()
    body += b'{"type":"event"}\n' + event + b'\n{"type":"session"}\n' + session  # no final newline
    query = {
        "sentry_key": KEY,
        "sentry_version": "7",
        "sentry_client": "sentry.javascript.node/7.38.0",
    }
    auth, envelope = envelope_of(Request({}, body, query))
    assert auth == SentryAuth(KEY, None, 7, "sentry.javascript.node/7.38.0")
    normalized = event_of(envelope)
    assert normalized["breadcrumbs"]["values"][0]["level"] == "info"
    assert normalized["request"]["headers"] == [["host", "localhost"]]
    assert summarize(normalized).culprit == "handle(/app/server.js)"
    update = normalize_session(orjson.loads(envelope.items[1].payload), received_at=NOW)
    assert update is not None and (update["init"], update["seq"], update["errors"]) == (True, 0, 1)


def test_ruby_empty_content_encoding_and_dsn_header() -> None:
    frame = {"filename": "app/models/user.rb", "function": "block in save", "in_app": True}
    exception = {
        "type": "NoMethodError",
        "value": "undefined method `x' for nil:NilClass",
        "stacktrace": {"frames": [frame]},
    }
    event = orjson.dumps(
        {
            "event_id": EVENT_ID,
            "timestamp": "2023-11-14T22:13:19Z",  # Ruby's iso8601: whole seconds
            "platform": "ruby",
            "level": "error",
            "exception": {"values": [exception]},
        }
    )
    head = orjson.dumps(
        {
            "event_id": EVENT_ID,
            "dsn": DSN,
            "sdk": {"name": "sentry.ruby", "version": "5.9.0"},
            "sent_at": "2023-11-14T22:13:20Z",
        }
    )
    sessions = b'{"attrs":{"release":"rails@1"},'
    sessions += b'"aggregates":[{"started":"2023-11-14T22:12:00Z","exited":2}]}'
    body = b"\n".join(
        [
            head,
            b'{"type":"event","content_type":"application/json"}',
            event,
            b'{"type":"sessions"}',
            sessions,
        ]
    )
    header = (
        "Sentry sentry_version=7, sentry_client=sentry-ruby/5.9.0, "
        f"sentry_timestamp=1699999999, sentry_key={KEY}"
    )
    headers = {
        "X-Sentry-Auth": header,
        "Content-Encoding": "",
        "Content-Type": "application/x-sentry-envelope",
    }
    auth, envelope = envelope_of(Request(headers, body))
    assert auth == SentryAuth(KEY, None, 7, "sentry-ruby/5.9.0")  # header and dsn agree
    normalized = event_of(envelope)
    assert normalized["timestamp"] == NOW - 1
    assert summarize(normalized).culprit == "app/models/user.rb in block in save"
    buckets = normalize_session_aggregates(orjson.loads(envelope.items[1].payload), received_at=NOW)
    assert buckets[0]["environment"] == "production"


def test_rust_hyphenated_event_id_header_and_float_timestamps() -> None:
    event = orjson.dumps(
        {
            "event_id": "9ec79c33-ec99-42ab-8353-589fcb2e04dc",
            "timestamp": NOW - 0.125,
            "platform": "native",
            "level": "error",
            "exception": {
                "values": [
                    {
                        "type": "panic",
                        "value": "called `Option::unwrap()` on a `None` value",
                        "mechanism": {"type": "panic", "handled": False},
                        "stacktrace": {
                            "frames": [
                                {"function": "main", "in_app": True},
                                {"function": "core::panicking::panic", "in_app": False},
                            ]
                        },
                    }
                ]
            },
            "breadcrumbs": {"values": [{"timestamp": NOW - 0.5, "ty": "default", "message": "m"}]},
        }
    )
    body = (
        b'{"event_id":"9ec79c33-ec99-42ab-8353-589fcb2e04dc"}\n{"type":"event","length":%d}\n%s\n'
        % (len(event), event)
    )
    header = (
        f"Sentry sentry_key={KEY}, sentry_version=7, sentry_timestamp=1699999999.987, "
        "sentry_client=sentry.rust/0.31.0"
    )
    auth, envelope = envelope_of(Request({"x-sentry-auth": header}, body))
    assert auth is not None and auth.client == "sentry.rust/0.31.0"
    normalized = event_of(envelope)
    assert (normalized["event_id"], normalized["timestamp"]) == (EVENT_ID, NOW - 0.125)
    assert normalized["breadcrumbs"]["values"][0]["timestamp"] == NOW - 0.5
    assert summarize(normalized).culprit == "main"


def test_installed_python_sdk_envelope() -> None:
    """A real envelope from the sentry-sdk installed here, serialized by the SDK itself."""
    sentry_sdk = pytest.importorskip("sentry_sdk")
    from sentry_sdk.transport import Transport

    captured: list[bytes] = []

    class Capture(Transport):
        def capture_envelope(self, envelope: Any) -> None:
            captured.append(envelope.serialize())

    client = sentry_sdk.Client(
        DSN, transport=Capture, release="tracebox-test@1", default_integrations=False
    )
    with sentry_sdk.new_scope() as scope:
        scope.set_client(client)
        scope.set_tag("feature", "checkout")
        scope.set_user({"id": 7})
        lookup: dict[str, int] = {}
        try:
            lookup["missing"]
        except KeyError:
            sentry_sdk.capture_exception()
        sentry_sdk.capture_message("hello %s")
    client.close()
    envelopes = [parse_envelope(body, max_items=10) for body in captured]
    events = [event_of(e) for e in envelopes if any(i.type == "event" for i in e.items)]
    assert len(events) == 2
    error, message = (summarize(e) for e in events)
    assert error.title == "KeyError: 'missing'" and error.user_key == "id:7"
    assert error.culprit is not None and "test_installed_python_sdk_envelope" in error.culprit
    assert message.title == "hello %s"
    assert (
        events[0]["tags"] == [["feature", "checkout"]] and events[0]["release"] == "tracebox-test@1"
    )
