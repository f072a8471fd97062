"""Envelopes of the item types of issue 12, as the SDKs frame them, and readers of what
the digest stored."""

from __future__ import annotations

import time
from typing import Any

import httpx
import orjson
import sqlalchemy as sa

from tests.ingest.conftest import Ingest
from tests.ingest.test_ingest_endpoints import envelope
from tracebox.store.tables import attachments, client_reports, dropped_items, logs, user_reports

EVENT_ID = "ab" * 16


def item(item_type: str, payload: bytes, **headers: Any) -> tuple[dict[str, object], bytes]:
    return {"type": item_type, "length": len(payload), **headers}, payload


def json_item(item_type: str, body: Any, **headers: Any) -> tuple[dict[str, object], bytes]:
    return item(item_type, orjson.dumps(body), **headers)


def event_item(message: str = "boom", **fields: Any) -> tuple[dict[str, object], bytes]:
    return json_item("event", {"message": message, "level": "error", **fields})


def log_container(*records: dict[str, Any]) -> tuple[dict[str, object], bytes]:
    return json_item(
        "log",
        {"items": list(records)},
        item_count=len(records),
        content_type="application/vnd.sentry.items.log+json",
    )


def log_record(body: str, level: str = "info", **attributes: Any) -> dict[str, Any]:
    return {
        "timestamp": time.time(),
        "level": level,
        "body": body,
        "trace_id": "5b8efff798038103d269b633813fc60c",
        "attributes": {k: {"value": v, "type": "string"} for k, v in attributes.items()},
    }


def post(
    ingest: Ingest, *items: tuple[dict[str, object], bytes], event_id: str | None = EVENT_ID
) -> httpx.Response:
    headers = {"event_id": event_id} if event_id else {}
    body = envelope(*items, headers=headers)
    return ingest.client.post(ingest.url("envelope"), content=body, headers=ingest.auth())


def rows(ingest: Ingest, table: sa.Table) -> list[sa.RowMapping]:
    ingest.digest()
    with ingest.db.read() as conn:
        return list(conn.execute(sa.select(table)).mappings())


def dropped(ingest: Ingest) -> dict[str, int]:
    return {r["item_type"]: r["count"] for r in rows(ingest, dropped_items)}


__all__ = [
    "EVENT_ID",
    "attachments",
    "client_reports",
    "dropped",
    "event_item",
    "item",
    "json_item",
    "log_container",
    "log_record",
    "logs",
    "post",
    "rows",
    "user_reports",
]
