"""Attachments, user feedback, logs and client reports on /api/v4, and the user report
count on both APIs (issue 12)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.ingest.test_ingest_endpoints import envelope
from tests.inprocess import Api, api_client
from tests.sdkdata.helpers import EVENT_ID, event_item, item, json_item, log_container, log_record
from tracebox.config import Settings
from tracebox.digest.worker import DigestWorker
from tracebox.models import ClientKey, Project
from tracebox.spool import SpoolReader
from tracebox.store import Database, client_keys


@dataclass
class World:
    api: Api
    project: Project
    key: ClientKey
    token: str

    def send(
        self, *items: tuple[dict[str, object], bytes], event_id: str | None = EVENT_ID
    ) -> None:
        auth = {"X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={self.key.public_key}"}
        body = envelope(*items, headers={"event_id": event_id} if event_id else {})
        r = self.api.client.post(f"/api/{self.project.id}/envelope/", content=body, headers=auth)
        assert r.status_code == 200, r.text
        DigestWorker(self.api.db, SpoolReader(self.api.settings.spool_dir), batch_size=100).drain()

    def call(self, path: str) -> httpx.Response:
        """GET ``path`` under the project's /api/v4/projects/:id/error_tracking."""
        url = f"/api/v4/projects/{self.project.id}/error_tracking{path}"
        return self.api.call("GET", url, self.token)

    def get(self, path: str) -> Any:
        r = self.call(path)
        assert r.status_code == 200, r.text
        return r.json()


@pytest.fixture
def world(settings: Settings, db: Database) -> Iterator[World]:
    for api in api_client(settings, db):
        owner = api.user("owner")
        project = api.project("acme/web", owner)
        with db.write() as conn:
            key = client_keys.create(conn, project.id)
        yield World(api, project, key, api.token(owner))


def test_attachments_of_an_event_and_their_download(world: World) -> None:
    world.send(
        event_item(),
        item("attachment", b"<svg onload=x>", filename="pic.svg", content_type="image/svg+xml"),
    )
    (error,) = world.get("/errors")
    (listed,) = world.get(f"/errors/{error['id']}/events/{EVENT_ID}/attachments")
    assert (listed["name"], listed["content_type"], listed["size"]) == (
        "pic.svg",
        "image/svg+xml",
        14,
    )
    r = world.api.call("GET", listed["download_url"], world.token)
    assert r.status_code == 200 and r.content == b"<svg onload=x>"
    assert r.headers["content-type"] == "application/octet-stream"
    assert r.headers["content-disposition"].startswith('attachment; filename="pic.svg"')
    assert r.headers["x-content-type-options"] == "nosniff"
    assert world.call("/attachments/99999").status_code == 404
    other_event = world.call(f"/errors/{error['id']}/events/{'c' * 32}/attachments")
    assert other_event.status_code == 404


def test_user_feedback_pages_and_the_report_count(world: World) -> None:
    world.send(event_item("checkout crashed"))
    for n in range(3):
        report = {"event_id": EVENT_ID, "name": f"user {n}", "comments": f"comment {n}"}
        world.send(json_item("user_report", report), event_id=None)
    r = world.call("/user_feedback?per_page=2")
    first = r.json()
    assert [f["comments"] for f in first] == ["comment 2", "comment 1"]
    assert first[0]["event_id"] == EVENT_ID and first[0]["error_id"] is not None
    next_url = r.headers["Link"].split(">")[0].lstrip("<").replace("http://testserver", "")
    rest = world.api.call("GET", next_url, world.token).json()
    assert [f["comments"] for f in rest] == ["comment 0"]
    error_id = first[0]["error_id"]
    assert len(world.get(f"/errors/{error_id}/user_feedback")) == 3
    details = world.get(f"/errors/{error_id}")
    assert details["user_report_count"] == 3
    auth = {"Authorization": f"Bearer {world.token}"}
    issue = world.api.client.get(f"/api/0/issues/{error_id}/", headers=auth).json()
    assert issue["userReportCount"] == 3


def test_log_search_filters_and_validation(world: World) -> None:
    now = time.time()
    world.send(
        log_container(
            {**log_record("first", "info"), "timestamp": now - 100},
            {**log_record("second", "error"), "timestamp": now - 50},
            {**log_record("third", "warn"), "timestamp": now - 10, "trace_id": "2" * 32},
        ),
        event_id=None,
    )

    def bodies(path: str) -> list[str]:
        return [r["body"] for r in world.get(path)]

    assert bodies("/logs") == ["third", "second", "first"]
    assert bodies("/logs?level=error&level=warn") == ["third", "second"]
    assert bodies("/logs?search=SEC") == ["second"]
    assert bodies(f"/logs?since={now - 60}") == ["third", "second"]
    assert bodies(f"/logs?until={now - 60}") == ["first"]
    assert bodies("/logs?trace_id=" + "2" * 32) == ["third"]
    (record,) = world.get("/logs?per_page=1")
    assert record["attributes"] == {} and record["trace_id"] == "2" * 32
    for bad in ("?level=loud", "?trace_id=xyz", "?cursor=nope", "?per_page=1000"):
        r = world.call(f"/logs{bad}")
        assert r.status_code == 400, (bad, r.text)


def test_what_sdks_discarded_per_category_and_reason(world: World) -> None:
    def report(*entries: tuple[str, str, int]) -> tuple[dict[str, object], bytes]:
        found = [{"category": c, "reason": r, "quantity": n} for c, r, n in entries]
        return json_item("client_report", {"discarded_events": found})

    world.send(report(("error", "before_send", 2), ("error", "queue_overflow", 1)), event_id=None)
    world.send(report(("error", "before_send", 3), ("log_item", "sample_rate", 4)), event_id=None)
    assert world.get("/client_reports") == [
        {"category": "error", "reason": "before_send", "count": 5},
        {"category": "log_item", "reason": "sample_rate", "count": 4},
        {"category": "error", "reason": "queue_overflow", "count": 1},
    ]
    assert world.get("/client_reports?days=90")[0]["count"] == 5
    for bad in ("0", "91", "x"):
        assert world.call(f"/client_reports?days={bad}").status_code == 400, bad
