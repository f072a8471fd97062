"""Generic webhook: a documented JSON body (docs/alerts.md), signed with HMAC-SHA256.

Headers: ``X-Tracebox-Timestamp`` (unix seconds), ``X-Tracebox-Signature``
(``sha256=<hex>`` of HMAC-SHA256(secret, "<timestamp>." + body)), ``Idempotency-Key``
and ``X-Tracebox-Delivery`` (the same key for every attempt of one delivery), and
``X-Tracebox-Event`` (the notification's kind).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from typing import Any

import orjson

from tracebox.alerts.message import Message

SCHEMA_VERSION = 1
SECRET_BYTES = 32


def new_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(SECRET_BYTES)


def signature(secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def body(message: Message, key: str, now: float) -> bytes:
    doc: dict[str, Any] = {
        "version": SCHEMA_VERSION,
        "id": key,
        "kind": message.kind,
        "sent_at": dt.datetime.fromtimestamp(now, dt.UTC).isoformat().replace("+00:00", "Z"),
        "headline": message.headline,
        "title": message.title,
        "text": message.text,
        "url": message.url,
        "project": message.project,
        "rule": message.rule,
        "error": {**message.error, "top_frame": message.top_frame} if message.error else None,
        "event": message.event,
        "details": message.details,
        "errors": [
            {
                "id": i.error_id,
                "title": i.title,
                "culprit": i.culprit,
                "events": i.events,
                "url": i.url,
            }
            for i in message.items
        ],
    }
    return orjson.dumps(doc)


def headers(secret: str, key: str, kind: str, payload: bytes, now: float) -> dict[str, str]:
    timestamp = int(now)
    return {
        "X-Tracebox-Event": kind,
        "X-Tracebox-Delivery": key,
        "Idempotency-Key": key,
        "X-Tracebox-Timestamp": str(timestamp),
        "X-Tracebox-Signature": signature(secret, timestamp, payload),
    }
