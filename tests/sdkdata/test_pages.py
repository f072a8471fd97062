"""The pages of issue 12 in-process: an error's attachments, logs of its trace and user
feedback; the log search; the feedback list; downloads that are never rendered."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

import orjson
import pytest

from tests.ingest.test_ingest_endpoints import envelope
from tests.inprocess import Ui, ui_client
from tests.sdkdata.helpers import EVENT_ID, event_item, item, json_item, log_container, log_record
from tracebox.config import Settings
from tracebox.digest.worker import DigestWorker
from tracebox.models import AccessLevel, ClientKey, Project
from tracebox.spool import SpoolReader
from tracebox.store import Database, client_keys

TRACE = "5b8efff798038103d269b633813fc60c"
HOSTILE = "<img src=x onerror=alert(1)>"


@dataclass
class World:
    ui: Ui
    project: Project
    key: ClientKey

    def send(
        self, *items: tuple[dict[str, object], bytes], event_id: str | None = EVENT_ID
    ) -> None:
        auth = {"X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={self.key.public_key}"}
        body = envelope(*items, headers={"event_id": event_id} if event_id else {})
        r = self.ui.client.post(f"/api/{self.project.id}/envelope/", content=body, headers=auth)
        assert r.status_code == 200, r.text
        DigestWorker(self.ui.db, SpoolReader(self.ui.settings.spool_dir), batch_size=100).drain()

    def error_page(self) -> str:
        listing = self.ui.client.get("/acme/web/-/error_tracking").text
        error_id = re.findall(r'/-/error_tracking/(\d+)"', listing)[0]
        return self.ui.client.get(f"/acme/web/-/error_tracking/{error_id}").text


@pytest.fixture
def world(settings: Settings, db: Database) -> Iterator[World]:
    for ui in ui_client(settings, db):
        owner = ui.user("owner")
        ui.sign_in(owner)
        project = ui.project("acme/web", owner)
        with db.write() as conn:
            key = client_keys.create(conn, project.id)
        yield World(ui, project, key)


def event_with_trace() -> tuple[dict[str, object], bytes]:
    return event_item("payment failed", contexts={"trace": {"trace_id": TRACE}})


def test_the_error_page_shows_attachments_trace_logs_and_feedback(world: World) -> None:
    world.send(
        event_with_trace(),
        item("attachment", HOSTILE.encode(), filename=f"{HOSTILE}.html", content_type="text/html"),
        log_container(log_record(f"charging card {HOSTILE}"), log_record("card declined", "error")),
        json_item("user_report", {"event_id": EVENT_ID, "name": "Ann", "comments": HOSTILE}),
    )
    page = world.error_page()
    assert HOSTILE not in page
    assert 'id="attachments-title">Attachments' in page
    assert "&lt;img src=x onerror=alert(1)&gt;.html" in page
    size = len(HOSTILE.encode())
    assert f"The project keeps 1 attachment, {size} B of at most 1.0 GiB." in page
    assert 'id="logs-title">Logs of this trace' in page
    assert "charging card &lt;img" in page and "card declined" in page
    assert f'href="/acme/web/-/logs?trace={TRACE}"' in page
    assert ">1 user report</a>" in page
    assert 'id="feedback-title">User feedback' in page and "<strong>Ann</strong>" in page


def test_an_attachment_downloads_and_is_never_inline(world: World) -> None:
    world.send(event_item(), item("attachment", HOSTILE.encode(), filename='a "b"/../c.html'))
    attachment_id = re.findall(r"/-/attachments/(\d+)", world.error_page())[0]
    r = world.ui.client.get(f"/acme/web/-/attachments/{attachment_id}")
    assert r.status_code == 200
    assert r.content == HOSTILE.encode()
    assert r.headers["content-type"] == "application/octet-stream"
    assert r.headers["content-disposition"] == (
        "attachment; filename=\"a _b_.._c.html\"; filename*=UTF-8''a%20_b_.._c.html"
    )
    assert r.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in r.headers["content-security-policy"]
    assert world.ui.client.get("/acme/web/-/attachments/999999").status_code == 404


def test_a_large_attachment_streams_in_chunks(world: World) -> None:
    data = bytes(range(256)) * (3 * 4096 + 7)  # about 3 MiB: four chunks
    world.send(event_item(), item("attachment", data, filename="dump.bin"))
    attachment_id = re.findall(r"/-/attachments/(\d+)", world.error_page())[0]
    r = world.ui.client.get(f"/acme/web/-/attachments/{attachment_id}")
    assert r.content == data
    assert r.headers["content-length"] == str(len(data))


def test_only_reporters_and_above_download(world: World) -> None:
    world.send(event_item(), item("attachment", b"secret", filename="s.txt"))
    attachment_id = re.findall(r"/-/attachments/(\d+)", world.error_page())[0]
    guest = world.ui.user("guest")
    world.ui.member(world.project, guest, AccessLevel.GUEST)
    world.ui.client.cookies.clear()
    world.ui.sign_in(guest)
    r = world.ui.client.get(f"/acme/web/-/attachments/{attachment_id}")
    assert r.status_code == 403 and b"secret" not in r.content
    reporter = world.ui.user("reporter")
    world.ui.member(world.project, reporter, AccessLevel.REPORTER)
    world.ui.client.cookies.clear()
    world.ui.sign_in(reporter)
    assert world.ui.client.get(f"/acme/web/-/attachments/{attachment_id}").content == b"secret"


def test_log_search_by_level_text_time_and_trace(world: World) -> None:
    now = time.time()
    old = {**log_record("yesterday's news"), "timestamp": now - 2 * 86400}
    other_trace = {**log_record("elsewhere", "warn"), "trace_id": "1" * 32}
    world.send(
        log_container(log_record("cart opened"), log_record(f"card {HOSTILE}", "error"), old),
        log_container(other_trace),
        event_id=None,
    )
    page = world.ui.client.get("/acme/web/-/logs").text
    assert "cart opened" in page and "elsewhere" in page
    assert "yesterday" not in page  # older than the default 24 hours
    assert HOSTILE not in page and "card &lt;img" in page
    errors_only = world.ui.client.get("/acme/web/-/logs?level=error").text
    assert "card &lt;img" in errors_only and "cart opened" not in errors_only
    by_text = world.ui.client.get("/acme/web/-/logs?q=CART").text
    assert "cart opened" in by_text and "elsewhere" not in by_text
    week = world.ui.client.get("/acme/web/-/logs?range=7d").text
    assert "yesterday" in week
    trace = world.ui.client.get("/acme/web/-/logs?trace=" + "1" * 32).text
    assert "elsewhere" in trace and "cart opened" not in trace
    assert "4 records" in page  # the project's total, whatever the filter


def test_log_search_pages_by_keyset(world: World) -> None:
    now = time.time()
    records = [{**log_record(f"line {n:03d}"), "timestamp": now - n} for n in range(150)]
    world.send(log_container(*records[:80]), log_container(*records[80:]), event_id=None)
    first = world.ui.client.get("/acme/web/-/logs").text
    shown = re.findall(r"line (\d{3})", first)
    assert len(shown) == 100 and shown[0] == "000"
    older = re.search(r'rel="next" href="([^"]+)"', first)
    assert older
    second = world.ui.client.get(older.group(1).replace("&amp;", "&")).text
    assert re.findall(r"line (\d{3})", second) == [f"{n:03d}" for n in range(100, 150)]
    assert world.ui.client.get("/acme/web/-/logs?cursor=nope").status_code == 400


def test_feedback_page_lists_and_links_errors(world: World) -> None:
    world.send(
        event_item("checkout crashed"),
        json_item(
            "feedback",
            {
                "event_id": "f" * 32,
                "contexts": {
                    "feedback": {
                        "message": "The pay button froze",
                        "contact_email": "ann@example.com",
                        "name": "Ann",
                        "associated_event_id": EVENT_ID,
                        "source": "widget",
                    }
                },
            },
        ),
    )
    world.send(
        json_item("user_report", {"event_id": "9" * 32, "comments": "No event"}), event_id=None
    )
    page = world.ui.client.get("/acme/web/-/user_feedback").text
    assert "The pay button froze" in page and "&lt;ann@example.com&gt;" in page
    assert re.search(r'On <a href="/acme/web/-/error_tracking/\d+">checkout crashed</a>', page)
    assert "(not stored)" in page


def test_an_error_level_record_with_an_error_is_an_error(world: World) -> None:
    record = log_record("charge failed", "error", error="card_declined: insufficient funds")
    record["attributes"]["sentry.sdk.name"] = {"value": "sentry.go", "type": "string"}
    world.send(log_container(record, log_record("all good", "error")), event_id=None)
    listing = world.ui.client.get("/acme/web/-/error_tracking").text
    assert listing.count('class="error-title"') == 1
    assert "charge failed" in listing
    page = world.error_page()
    assert "card_declined: insufficient funds" in page
    assert 'id="logs-title">Logs of this trace' in page  # the record itself, by its trace


def test_the_sidebar_links_the_new_pages(world: World) -> None:
    page = world.ui.client.get("/acme/web/-/logs").text
    assert 'href="/acme/web/-/logs" aria-current="page">Logs<' in page
    assert 'href="/acme/web/-/user_feedback"' in page
    assert orjson.loads(b"{}") == {}
