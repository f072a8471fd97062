"""Tracebox SDK compatibility program for sentry-sdk (Python) 2.75.0.

2.75.0 was the latest 2.x release on PyPI when this was written.

Environment: SENTRY_DSN (required), TRACEBOX_RELEASE (default "sdk-test@1.0.0"),
TRACEBOX_ENV (default "test"), TRACEBOX_REPEAT (default 1).

Sends, with user id "user-42":
  * TRACEBOX_REPEAT exception events: ValueError("invalid quantity: 7") raised in
    validate_quantity <- process_order <- handle_request (same code path each time);
  * one message event "tracebox sdk test message" at level warning;
  * an application-mode session (a "session" item with errors == TRACEBOX_REPEAT,
    status exited) and one request-mode session (a "sessions" aggregate item),
    the latter through sentry_sdk.sessions.track_session -- the code path the
    WSGI/ASGI integrations use.

sentry-sdk 2.x sends everything to /envelope/.

Prints "kind=<kind>" then "event_id=<32hex>" for every event. Exits 0 only if the
SDK's transport reported no dropped request (HttpTransport.on_dropped_event, which
the SDK calls for network errors, non-2xx answers, 429s and a full queue) and
every request it made returned normally.
"""

from __future__ import annotations

import os
import sys
import threading

import sentry_sdk
from sentry_sdk.sessions import track_session
from sentry_sdk.transport import HttpTransport

_lock = threading.Lock()
_dropped: list[str] = []
_failed: list[str] = []
_delivered = 0


class RecordingTransport(HttpTransport):
    """The SDK's own HTTP transport, plus bookkeeping of what it reported."""

    def on_dropped_event(self, reason):  # type: ignore[no-untyped-def]
        with _lock:
            _dropped.append(str(reason))
        return super().on_dropped_event(reason)

    def _send_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        global _delivered
        before = len(_dropped)
        try:
            result = super()._send_request(*args, **kwargs)
        except Exception as exc:
            with _lock:
                _failed.append(repr(exc))
            raise
        with _lock:
            if len(_dropped) == before:
                _delivered += 1
        return result


def validate_quantity(quantity: int) -> None:
    if quantity > 5:
        raise ValueError(f"invalid quantity: {quantity}")


def process_order(quantity: int) -> None:
    validate_quantity(quantity)


def handle_request(quantity: int) -> None:
    process_order(quantity)


def main() -> int:
    dsn = os.environ.get("SENTRY_DSN")
    if not dsn:
        print("SENTRY_DSN is not set", file=sys.stderr)
        return 2
    repeat = max(1, int(os.environ.get("TRACEBOX_REPEAT") or 1))
    sentry_sdk.init(
        dsn=dsn,
        release=os.environ.get("TRACEBOX_RELEASE") or "sdk-test@1.0.0",
        environment=os.environ.get("TRACEBOX_ENV") or "test",
        transport=RecordingTransport,
        debug=bool(os.environ.get("TRACEBOX_SDK_DEBUG")),
    )
    sentry_sdk.set_user({"id": "user-42", "email": "user42@example.com"})

    events = 0
    sentry_sdk.start_session(session_mode="application")
    for _ in range(repeat):
        try:
            handle_request(7)
        except ValueError as exc:
            event_id = sentry_sdk.capture_exception(exc)
            print("kind=exception")
            print(f"event_id={event_id}")
            events += 1
    event_id = sentry_sdk.capture_message("tracebox sdk test message", level="warning")
    print("kind=message")
    print(f"event_id={event_id}")
    events += 1
    sentry_sdk.end_session()
    print("kind=session")
    print("session_mode=application")

    with track_session(sentry_sdk.get_isolation_scope(), session_mode="request"):
        pass  # a healthy "request"
    print("kind=session")
    print("session_mode=request")

    client = sentry_sdk.get_client()
    client.flush(timeout=10)  # sends pending session aggregates and waits for the queue
    client.close(timeout=10)

    code = 0
    for reason in _dropped:
        print(f"transport dropped a request: {reason}", file=sys.stderr)
        code = 1
    for err in _failed:
        print(f"transport error: {err}", file=sys.stderr)
        code = 1
    # every event envelope + the session envelope(s) must have been delivered
    if _delivered < events + 1:
        print(f"only {_delivered} requests delivered, expected >= {events + 1}", file=sys.stderr)
        code = 1
    return code


if __name__ == "__main__":
    sys.exit(main())
