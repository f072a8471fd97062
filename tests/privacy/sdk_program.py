"""The real Python SDK (sentry-sdk 2.x, as installed with Tracebox) sending secrets.

Run as ``python -m tests.privacy.sdk_program`` with SENTRY_DSN set. ``send_default_pii``
is on and the SDK's own scrubber is emptied, so everything reaches the server in clear:
request headers, cookies, query string, the connection's address, local variables, a
log breadcrumb, tags, extra, contexts, the user. Prints ``event_id=<id>`` per event.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os

import sentry_sdk
from sentry_sdk.integrations.logging import LoggingIntegration
from sentry_sdk.integrations.wsgi import SentryWsgiMiddleware
from sentry_sdk.scrubber import EventScrubber

from tests.privacy import secrets as s

EVENT_IDS: list[str] = []


def before_send(event: dict[str, object], hint: object) -> dict[str, object]:
    EVENT_IDS.append(str(event["event_id"]))
    return event


def pay(environ: dict[str, object], start_response: object) -> list[bytes]:
    password = s.PASSWORD  # local variables holding secrets
    api_key = s.API_KEY
    card_number = s.CARD
    aws_key = s.AWS
    note = f"retry with {s.GITHUB}"
    held = (password, api_key, aws_key, note)  # the SDK sends every local variable
    raise RuntimeError(f"charge failed for card {card_number} ({len(held)} attempts)")


def main() -> None:
    sentry_sdk.init(
        dsn=os.environ["SENTRY_DSN"],
        send_default_pii=True,
        include_local_variables=True,
        event_scrubber=EventScrubber(denylist=[], pii_denylist=[]),
        integrations=[LoggingIntegration(level=logging.INFO, event_level=None)],
        before_send=before_send,
        release="shop@1.0.0",
    )
    sentry_sdk.set_user({"id": "user-42", "email": "bob@example.com", "ip_address": "{{auto}}"})
    sentry_sdk.set_tag("session_id", s.SESSION)
    sentry_sdk.set_extra("database", s.URL)
    sentry_sdk.set_extra("slack", s.SLACK)
    sentry_sdk.set_context("payment", {"private_key": s.PRIVATE_KEY, "jwt": s.JWT, "dsn": s.DSN})
    logging.getLogger("shop").info("calling the bank with %s and %s", s.BEARER, s.TBPAT)
    sentry_sdk.add_breadcrumb(
        category="auth",
        message=f"login password={s.PASSWORD}",
        data={"credentials": s.CREDENTIALS, "hook": s.SLACK_HOOK},
    )
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/pay",
        "QUERY_STRING": f"token={s.TBPAT}&api_key={s.API_KEY}&page=2",
        "SERVER_NAME": "shop.example.com",
        "SERVER_PORT": "443",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.url_scheme": "https",
        "wsgi.input": io.BytesIO(b""),
        "HTTP_HOST": "shop.example.com",
        "HTTP_AUTHORIZATION": s.BEARER,
        "HTTP_COOKIE": s.COOKIE,
        "HTTP_X_API_KEY": s.API_KEY,
        "HTTP_X_CSRF_TOKEN": s.CSRF,
        "HTTP_X_FORWARDED_FOR": "203.0.113.9",
        "REMOTE_ADDR": "203.0.113.9",
    }
    with contextlib.suppress(RuntimeError):
        SentryWsgiMiddleware(pay)(environ, lambda *_: None)
    sentry_sdk.capture_message(f"login failed: password={s.PASSWORD} card {s.CARD_DIGITS}")
    sentry_sdk.flush(timeout=20)
    for event_id in EVENT_IDS:
        print(f"event_id={event_id}")


if __name__ == "__main__":
    main()
