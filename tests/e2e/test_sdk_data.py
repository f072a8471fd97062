"""Issue 12 with real SDKs against a live server (SQLite and PostgreSQL): sentry-python's
local variables in both APIs, its attachment downloaded and never inline, its feedback on
its error, its logs in the trace and its client report; sentry-go's slog records and
@sentry/node's Sentry.logger records in the log search, their error-level record in the
error list; a real Rust panic blamed on the application."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e import sdk_programs
from tests.e2e.programs.python_sdk_data import ATTACHMENT
from tests.helpers import LiveServer, cli, wait_for
from tracebox.store import Database, client_reports

pytestmark = pytest.mark.slow


class Rest:
    """The live server's /api/v4 and /api/0 with root's token."""

    def __init__(self, server: LiveServer, project_id: int) -> None:
        token = cli(server.settings, "token", "create", "--user", "root", "--scope", "api")
        self.http = httpx.Client(base_url=server.url, headers={"PRIVATE-TOKEN": token["token"]})
        self.project_id = project_id
        self.base = f"/api/v4/projects/{project_id}/error_tracking"

    def get(self, path: str) -> Any:
        r = self.http.get(self.base + path, timeout=10)
        assert r.status_code == 200, r.text
        return r.json()

    def errors(self, count: int) -> list[dict[str, Any]]:
        return wait_for(lambda: (e := self.get("/errors?status=all")) and len(e) >= count and e)


@pytest.fixture
def project(live_server: LiveServer) -> Iterator[tuple[str, Rest]]:
    """A project's DSN, and the REST API to read what it stored."""
    created, key = live_server.create_project("acme/shop")
    rest = Rest(live_server, created["id"])
    yield live_server.dsn(key["public_key"], created["id"]), rest
    rest.http.close()


def _frames(exception: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["function"]: f for f in exception["stack_trace"]}


def test_python_variables_attachment_feedback_and_logs(
    project: tuple[str, Rest], db: Database
) -> None:
    dsn, rest = project
    printed = sdk_programs.run(sdk_programs.PYTHON_SDK_DATA, dsn)
    event_id, trace_id = printed["event_id"], printed["trace_id"]
    (error,) = rest.errors(1)
    assert error["type"] == "ValueError"

    event = rest.get(f"/errors/{error['id']}/events/{event_id}")
    charge = _frames(event["exceptions"][-1])["charge"]
    assert charge["vars"]["card_holder"] == "'Ann <script>x</script>'"  # the SDK's repr
    assert charge["vars"]["quantity"] == "7"
    assert event["exceptions"][-1]["mechanism"]["type"] == "generic"
    sentry_event = rest.http.get(f"/api/0/issues/{error['id']}/events/{event_id}/")
    (entry,) = [e for e in sentry_event.json()["entries"] if e["type"] == "exception"]
    sentry_frames = {f["function"]: f for f in entry["data"]["values"][-1]["stacktrace"]["frames"]}
    assert sentry_frames["charge"]["vars"]["unit_price"] == "12.5"

    (attachment,) = rest.get(f"/errors/{error['id']}/events/{event_id}/attachments")
    assert (attachment["name"], attachment["content_type"]) == ("receipt.html", "text/html")
    download = rest.http.get(attachment["download_url"], timeout=10)
    assert download.content == ATTACHMENT
    assert download.headers["content-type"] == "application/octet-stream"
    assert download.headers["content-disposition"].startswith('attachment; filename="receipt.html"')
    assert download.headers["x-content-type-options"] == "nosniff"

    reports = wait_for(lambda: rest.get(f"/errors/{error['id']}/user_feedback"))
    assert [(r["name"], r["email"], r["event_id"]) for r in reports] == [
        ("Ann", "ann@example.com", event_id)
    ]
    assert reports[0]["comments"] == "The pay button froze, then this error."
    assert rest.get(f"/errors/{error['id']}")["user_report_count"] == 1

    logs = wait_for(lambda: rest.get(f"/logs?trace_id={trace_id}"))
    assert [(r["level"], r["body"]) for r in logs] == [
        ("warn", "stock for sku-1 is low"),
        ("info", "checkout started for order 7"),
    ]
    assert logs[1]["attributes"]["logger.name"] == "shop.checkout"

    def discarded() -> list[client_reports.Discarded]:
        with db.read() as conn:
            return client_reports.totals(conn, rest.project_id, since_hour=0)

    assert wait_for(discarded) == [client_reports.Discarded("error", "before_send", 1)]


def test_go_slog_records_are_logs_and_their_error_an_error(
    project: tuple[str, Rest],
) -> None:
    dsn, rest = project
    sdk_programs.run(sdk_programs.installed(sdk_programs.GO_SLOG, "go"), dsn)
    logs = wait_for(lambda: (found := rest.get("/logs")) and len(found) == 3 and found)
    assert [(r["level"], r["body"]) for r in logs] == [
        ("error", "charge failed"),
        ("warn", "stock low"),
        ("info", "order received"),
    ]
    assert logs[0]["attributes"]["error"] == "card declined: insufficient funds"
    assert logs[2]["attributes"]["order_id"] == 42
    (error,) = rest.errors(1)
    assert (error["title"], error["value"]) == (
        "charge failed",
        "card declined: insufficient funds",
    )
    assert error["platform"] == "go"
    latest = rest.get(f"/errors/{error['id']}/events/latest")
    assert latest["contexts"]["trace"]["trace_id"] == logs[0]["trace_id"]


def test_node_logger_records_are_logs(project: tuple[str, Rest]) -> None:
    dsn, rest = project
    sdk_programs.run(sdk_programs.node_logs(), dsn)
    logs = wait_for(lambda: (found := rest.get("/logs")) and len(found) == 2 and found)
    assert [(r["level"], r["body"]) for r in logs] == [
        ("error", "payment failed"),
        ("info", "order 42 received"),
    ]
    assert logs[1]["attributes"]["sentry.message.template"] == "order %s received"
    (error,) = rest.errors(1)
    assert (error["title"], error["platform"]) == ("payment failed", "node")


def test_a_rust_panic_is_blamed_on_the_application(project: tuple[str, Rest]) -> None:
    dsn, rest = project
    sdk_programs.run(sdk_programs.installed(sdk_programs.RUST_PANIC, "rust"), dsn)
    (error,) = rest.errors(1)
    assert error["culprit"] == "tracebox_sdk_test_rust_panic::validate_quantity"
    assert error["title"] == "panic: invalid quantity: 7"
    assert error["unhandled"] is True  # mechanism panic, handled false
    latest = rest.get(f"/errors/{error['id']}/events/latest")
    in_app = [f["function"] for f in latest["stack_trace"] if f["in_app"]]
    assert in_app[-1] == "tracebox_sdk_test_rust_panic::validate_quantity"
    assert not [f for f in in_app if "sentry" in f or f.startswith(("std::", "core::"))]
