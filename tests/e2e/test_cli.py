"""The README's first-run path: project and key from the CLI, send-test-event, stored."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest
import sqlalchemy as sa

from tests.helpers import LiveServer, cli, tracebox_env, wait_for
from tracebox.store import Database
from tracebox.store.tables import errors


def send_test_event(server: LiveServer, dsn: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracebox", "send-test-event", dsn],
        env=tracebox_env(server.settings),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow
def test_send_test_event_is_stored_and_grouped(live_server: LiveServer, db: Database) -> None:
    project, key = live_server.create_project("acme/web")
    assert key["sentry_dsn"] == (
        f"http://{key['public_key']}@localhost:8000/api/v4/error_tracking/collector/{project['id']}"
    )
    assert cli(live_server.settings, "key", "list", "acme/web") == [key]
    dsn = live_server.dsn(key["public_key"], project["id"])
    for _ in range(2):
        done = send_test_event(live_server, dsn)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.startswith("accepted: event ")

    def error_rows() -> list[sa.RowMapping]:
        with db.read() as conn:
            return list(conn.execute(sa.select(errors)).mappings())

    rows = wait_for(lambda: (r := error_rows()) and r[0]["events_count"] == 2 and r)
    assert len(rows) == 1  # both events grouped into one error
    assert rows[0]["title"].startswith("RuntimeError: Tracebox test event")
    stats = cli(live_server.settings, "stats")
    assert (stats["events"], stats["errors"]) == (2, 1)

    metrics = httpx.get(f"{live_server.url}/-/metrics").text
    assert 'tracebox_items_accepted_total{endpoint="envelope",type="event"} 2.0' in metrics
    assert 'tracebox_digest_events_total{result="inserted"} 2.0' in metrics
    assert "tracebox_digest_lag_bytes" in metrics
    assert "tracebox_ingest_request_seconds_bucket" in metrics


@pytest.mark.slow
def test_send_test_event_reports_a_refused_key(live_server: LiveServer) -> None:
    project, _ = live_server.create_project("acme/web")
    done = send_test_event(live_server, live_server.dsn("f" * 32, project["id"]))
    assert done.returncode == 1
    assert "not accepted" in done.stdout and "401" in done.stdout
    metrics = httpx.get(f"{live_server.url}/-/metrics").text
    assert 'tracebox_requests_rejected_total{endpoint="envelope",reason="Unauthorized"}' in metrics
