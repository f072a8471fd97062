"""SDKs that send errors to /store/ (reference section 9): sentry-go 0.20.0, sentry-php
3.18.0 and sentry-python 1.21.0, plus the envelopes they send besides."""

from __future__ import annotations

import gzip

import orjson
import pytest

from tracebox.protocol.auth import SentryAuth
from tracebox.protocol.decoding import decode_store_body
from tracebox.protocol.event import normalize_event, summarize
from tracebox.protocol.session import normalize_session_aggregates

from .wire import DSN, EVENT_ID, GO_AUTH, KEY, MAX, NOW, Request, envelope_of, received


def test_go_store_event() -> None:
    body = orjson.dumps(
        {
            "event_id": EVENT_ID,
            "level": "error",
            "platform": "go",
            "message": "",
            "timestamp": "2023-11-14T23:13:19.123456789+01:00",
            "sdk": {"name": "sentry.go", "version": "0.20.0"},
            "exception": [
                {
                    "type": "*errors.errorString",
                    "value": "boom",
                    "stacktrace": {
                        "frames": [
                            {
                                "function": "main",
                                "module": "main",
                                "abs_path": "/app/main.go",
                                "lineno": 10,
                                "in_app": True,
                            }
                        ]
                    },
                }
            ],
            "breadcrumbs": [{"message": "started", "timestamp": "2023-11-14T23:13:18+01:00"}],
            "user": {},
            "tags": {},
            "contexts": {"device": {"arch": "amd64"}},
        }
    )
    header = GO_AUTH
    auth, plain = received(
        Request({"X-Sentry-Auth": header, "Content-Type": "application/json"}, body)
    )
    assert auth == SentryAuth(KEY, None, 7, "sentry.go/0.20.0")
    event = normalize_event(
        orjson.loads(decode_store_body(plain, max_bytes=MAX)), received_at=NOW, client_ip=None
    )
    assert event["event_id"] == EVENT_ID and event["timestamp"] == pytest.approx(
        NOW - 0.876544, abs=1e-6
    )
    assert event["breadcrumbs"]["values"][0]["timestamp"] == NOW - 2
    assert "logentry" not in event and "user" not in event
    result = summarize(event)
    assert (result.title, result.culprit) == ("*errors.errorString: boom", "main in main")


def test_go_transaction_envelope_with_json_content_type() -> None:
    txn = b'{"type":"transaction","transaction":"GET /","timestamp":1700000000.0}'
    head = orjson.dumps(
        {
            "event_id": EVENT_ID,
            "sent_at": "2023-11-14T22:13:20Z",
            "dsn": DSN,
            "sdk": {"name": "sentry.go", "version": "0.20.0"},
            "trace": {"trace_id": "a" * 32},
        }
    )
    body = head + b'\n{"type":"transaction","length":%d}\n' % len(txn) + txn + b"\n"
    header = GO_AUTH
    auth, envelope = envelope_of(
        Request({"X-Sentry-Auth": header, "Content-Type": "application/json"}, body)
    )
    assert auth is not None and auth.client == "sentry.go/0.20.0"
    assert [i.type for i in envelope.items] == ["transaction"]


def test_php_gzip_store_and_envelope_with_dsn() -> None:
    event = orjson.dumps(
        {
            "event_id": EVENT_ID,
            "timestamp": NOW - 2.5,
            "platform": "php",
            "level": "warning",
            "message": {
                "message": "User %s not found",
                "params": ["bob"],
                "formatted": "User bob not found",
            },
            "stacktrace": {
                "frames": [
                    {
                        "filename": "index.php",
                        "abs_path": "/var/www/index.php",
                        "lineno": 7,
                        "function": "find",
                        "in_app": True,
                    }
                ]
            },
            "sdk": {"name": "sentry.php", "version": "3.18.0"},
        }
    )
    header = f"Sentry sentry_version=7, sentry_client=sentry.php/3.18.0, sentry_key={KEY}"
    headers = {
        "X-Sentry-Auth": header,
        "Content-Type": "application/json",
        "Content-Encoding": "gzip",
    }
    _, plain = received(Request(headers, gzip.compress(event)))
    normalized = normalize_event(
        orjson.loads(decode_store_body(plain, max_bytes=MAX)), received_at=NOW, client_ip=None
    )
    assert normalized["logentry"]["formatted"] == "User bob not found"
    assert summarize(normalized).culprit == "index.php in find"
    # With tracing on, transactions go to /envelope/ with a dsn header, no length, no final newline.
    envelope_body = orjson.dumps(
        {"event_id": EVENT_ID, "dsn": DSN, "sent_at": "2023-11-14T22:13:20Z"}
    )
    envelope_body += (
        b'\n{"type":"transaction","content_type":"application/json"}\n{"type":"transaction"}'
    )
    headers["Content-Type"] = "application/x-sentry-envelope"
    auth, envelope = envelope_of(Request(headers, gzip.compress(envelope_body)))
    assert auth == SentryAuth(KEY, None, 7, "sentry.php/3.18.0")
    assert envelope.items[0].payload == b'{"type":"transaction"}'


def test_python_store_and_session_aggregates() -> None:
    event = orjson.dumps(
        {
            "event_id": EVENT_ID,
            "timestamp": "2023-11-14T22:13:19.000001Z",
            "platform": "python",
            "level": "error",
            "logentry": {"message": "cannot open %s", "params": ["/etc/x"]},
            "logger": "app",
            "exception": {
                "values": [
                    {
                        "type": "FileNotFoundError",
                        "value": "[Errno 2] No such file",
                        "module": None,
                        "mechanism": {"type": "logging", "handled": True},
                        "stacktrace": {
                            "frames": [
                                {
                                    "filename": "app.py",
                                    "module": "app",
                                    "function": "load",
                                    "lineno": 4,
                                    "context_line": "open(p)",
                                    "pre_context": [],
                                    "vars": {"p": "'/etc/x'"},
                                    "in_app": True,
                                }
                            ]
                        },
                    }
                ]
            },
            "breadcrumbs": {"values": []},
            "user": {"ip_address": "{{auto}}"},
        }
    )
    header = f"Sentry sentry_key={KEY}, sentry_version=7, sentry_client=sentry.python/1.21.0"
    store = Request({"X-Sentry-Auth": header, "Content-Encoding": "gzip"}, gzip.compress(event))
    _, plain = received(store)
    normalized = normalize_event(
        orjson.loads(decode_store_body(plain, max_bytes=MAX)),
        received_at=NOW,
        client_ip="192.0.2.1",
    )
    assert normalized["logentry"]["formatted"] == "cannot open /etc/x"
    assert normalized["user"] == {"ip_address": "192.0.2.1"}
    assert "breadcrumbs" not in normalized
    result = summarize(normalized)
    assert (result.title, result.culprit, result.user_key) == (
        "FileNotFoundError: [Errno 2] No such file",
        "app in load",
        "ip:192.0.2.1",
    )
    sessions = b'{"attrs":{"release":"api@3","environment":"production"},"aggregates":'
    sessions += b'[{"started":"2023-11-14T22:12:00+00:00","exited":5,"errored":1}]}'
    body = b'{"sent_at":"2023-11-14T22:13:20.000000Z"}\n{"type":"sessions","length":%d}\n%s\n' % (
        len(sessions),
        sessions,
    )
    _, envelope = envelope_of(
        Request({"X-Sentry-Auth": header, "Content-Encoding": "gzip"}, gzip.compress(body))
    )
    buckets = normalize_session_aggregates(orjson.loads(envelope.items[0].payload), received_at=NOW)
    assert [(b["exited"], b["errored"], b["release"]) for b in buckets] == [(5, 1, "api@3")]
