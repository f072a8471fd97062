"""Every item type of issue 12 through ingest and the digest: what is kept, what is
counted, and the bounds (at the limit and past it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from tests.ingest.conftest import Ingest, make_ingest
from tests.sdkdata.helpers import (
    EVENT_ID,
    attachments,
    client_reports,
    dropped,
    event_item,
    item,
    json_item,
    log_container,
    log_record,
    logs,
    post,
    rows,
    user_reports,
)
from tracebox.config import Settings
from tracebox.store import Database
from tracebox.store.tables import events, log_hourly


@pytest.fixture
def small(settings: Settings, db: Database) -> Iterator[Ingest]:
    limits = {
        "attachment_max_bytes": 100,
        "attachments_max_event_bytes": 150,
        "max_log_item_bytes": 2000,
        "max_client_report_bytes": 300,
    }
    yield from make_ingest(dataclasses.replace(settings, **limits), db)


def test_an_event_with_attachments_feedback_report_and_logs(ingest: Ingest) -> None:
    r = post(
        ingest,
        event_item(),
        item("attachment", b"hello\r\n", filename="notes.txt", content_type="text/plain"),
        item(
            "attachment", b"\x89PNG...", filename="screen.png", attachment_type="event.attachment"
        ),
        json_item("user_report", {"event_id": EVENT_ID, "name": "Ann", "comments": "It broke"}),
        json_item(
            "client_report",
            {
                "discarded_events": [
                    {"reason": "queue_overflow", "category": "error", "quantity": 3}
                ]
            },
        ),
        log_container(log_record("started"), log_record("charged", "warn")),
        json_item("transaction", {"type": "transaction"}),
        json_item("made_up_type", {}),
    )
    assert r.status_code == 200, r.text
    assert r.json() == {"id": EVENT_ID}
    stored = rows(ingest, attachments)
    assert [(a["name"], a["content_type"], a["size"], a["event_id"]) for a in stored] == [
        ("notes.txt", "text/plain", 7, EVENT_ID),
        ("screen.png", "application/octet-stream", 7, EVENT_ID),
    ]
    (report,) = rows(ingest, user_reports)
    assert (report["event_id"], report["name"], report["comments"]) == (EVENT_ID, "Ann", "It broke")
    (discarded,) = rows(ingest, client_reports)
    assert (discarded["category"], discarded["reason"], discarded["count"]) == (
        "error",
        "queue_overflow",
        3,
    )
    assert [(r["body"], r["level"]) for r in rows(ingest, logs)] == [
        ("started", "info"),
        ("charged", "warn"),
    ]
    assert sum(h["count"] for h in rows(ingest, log_hourly)) == 2
    assert dropped(ingest) == {"transaction": 1, "unknown": 1}


def test_resending_the_same_envelope_stores_nothing_twice(ingest: Ingest) -> None:
    items = (
        event_item(),
        item("attachment", b"same bytes", filename="a.txt"),
        json_item("user_report", {"event_id": EVENT_ID, "comments": "again"}),
    )
    post(ingest, *items)
    post(ingest, *items)
    assert len(rows(ingest, attachments)) == 1
    assert len(rows(ingest, user_reports)) == 1
    assert len(rows(ingest, events)) == 1


def test_attachment_bounds_per_item_and_per_event(small: Ingest) -> None:
    r = post(
        small,
        event_item(),
        item("attachment", b"x" * 100, filename="at-the-limit.bin"),
        item("attachment", b"x" * 101, filename="past-the-limit.bin"),
        item("attachment", b"x" * 50, filename="fills-the-event.bin"),
        item("attachment", b"x", filename="past-the-event.bin"),
    )
    assert r.status_code == 200, r.text
    names = [a["name"] for a in rows(small, attachments)]
    assert names == ["at-the-limit.bin", "fills-the-event.bin"]
    assert dropped(small) == {"attachment_too_large": 1, "attachments_over_event_limit": 1}
    assert len(rows(small, events)) == 1  # the event is never dropped for its files


def test_an_attachment_without_an_event_id_is_dropped_and_counted(ingest: Ingest) -> None:
    post(ingest, item("attachment", b"orphan", filename="o.txt"), event_id=None)
    assert rows(ingest, attachments) == []
    assert dropped(ingest) == {"attachment_no_event": 1}


def test_log_and_client_report_bounds(small: Ingest) -> None:
    fits = log_container(log_record("a" * 100))
    too_big = log_container(*[log_record("b" * 100) for _ in range(20)])
    assert len(fits[1]) <= 2000 < len(too_big[1])
    report = {"discarded_events": [{"reason": "sample_rate", "category": "error", "quantity": 1}]}
    padded = {**report, "pad": "p" * 300}
    post(
        small, fits, too_big, json_item("client_report", report), json_item("client_report", padded)
    )
    assert [r["body"] for r in rows(small, logs)] == ["a" * 100]
    assert len(rows(small, client_reports)) == 1
    assert dropped(small) == {"log_too_large": 20, "client_report_too_large": 1}


def test_invalid_items_are_counted_by_the_digest(ingest: Ingest) -> None:
    post(
        ingest,
        json_item("feedback", {"contexts": {}}),  # no message
        json_item("client_report", {"discarded_events": []}),
        log_container({"body": None}),
        item("log", b"{not json}"),
        item("user_report", b"[1]"),
        event_id=None,
    )
    assert rows(ingest, user_reports) == []
    assert dropped(ingest) == {
        "feedback_invalid": 1,
        "client_report_empty": 1,
        "log_empty": 1,
        "log_invalid_json": 1,
        "user_report_invalid": 1,
    }


def test_log_hourly_counts_follow_every_record(ingest: Ingest) -> None:
    post(ingest, log_container(*[log_record(f"line {n}") for n in range(5)]), event_id=None)
    with ingest.db.read() as conn:
        ingest.digest()
        total = conn.execute(sa.select(sa.func.sum(log_hourly.c.count))).scalar()
    assert total == 5


def test_secrets_in_logs_and_feedback_are_scrubbed_before_storage(ingest: Ingest) -> None:
    token = "ghp_" + "a1B2" * 9  # a GitHub token: scrubbed wherever it appears
    record = log_record(f"login with {token}", password="hunter2-hunter2")
    report = {"event_id": EVENT_ID, "name": "Ann", "comments": f"my token is {token}"}
    post(ingest, log_container(record), json_item("user_report", report), event_id=None)
    (stored,) = rows(ingest, logs)
    assert token not in stored["body"] and "hunter2" not in stored["attributes"]
    assert "[Filtered]" in stored["attributes"]
    (feedback,) = rows(ingest, user_reports)
    assert token not in feedback["comments"] and feedback["name"] == "Ann"
