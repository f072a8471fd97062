"""End to end: a project of Tracebox A linked to a project of a live Tracebox B through
B's Sentry-compatible /api/0/. Errors sent to B with the real Python SDK show in A, and
resolving them in A resolves them in B. B's token is then found in no page, response or
log line of A."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import LiveServer, cli, start_server, tracebox_env, wait_for
from tests.inprocess import CSRF
from tracebox.config import Settings

PASSWORD = "a long enough password 1"


def _settings(root: Path) -> Settings:
    return Settings(
        data_dir=root / "data", external_url="http://localhost:8000", digest_poll_interval_ms=5
    )


@pytest.fixture
def servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[LiveServer, LiveServer]]:
    b = start_server(_settings(tmp_path / "b"))
    # A reaches B on 127.0.0.1, so A allows the local network explicitly.
    monkeypatch.setenv("TRACEBOX_EXTERNAL_ALLOW_LOCAL_NETWORK", "true")
    monkeypatch.setenv("TRACEBOX_LOG_LEVEL", "debug")
    try:
        a = start_server(_settings(tmp_path / "a"))
    except Exception:
        b.stop()
        raise
    yield a, b
    a.stop()
    b.stop()


def _user_and_token(server: LiveServer, name: str) -> str:
    cli(
        server.settings,
        "user",
        "create",
        name,
        "--email",
        f"{name}@example.com",
        "--password",
        PASSWORD,
        "--admin",
    )
    return str(cli(server.settings, "token", "create", "--user", name, "--scope", "api")["token"])


def _send_errors(b: LiveServer, dsn: str) -> None:
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "tracebox", "send-test-event", dsn],
            env=tracebox_env(b.settings),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stdout + done.stderr


def _ui_pages(a: LiveServer, paths: list[str]) -> list[str]:
    with httpx.Client(base_url=a.url, follow_redirects=True) as browser:
        page = browser.get("/users/sign_in")
        csrf = CSRF.search(page.text)
        assert csrf
        browser.post(
            "/users/sign_in",
            data={"_csrf": csrf.group(1), "username": "alice", "password": PASSWORD},
        )
        return [browser.get(p).text for p in paths]


@pytest.mark.slow
def test_a_project_of_a_shows_and_resolves_the_errors_of_b(
    servers: tuple[LiveServer, LiveServer],
) -> None:
    a, b = servers
    b_project, b_key = b.create_project("acme/shop")
    b_token = _user_and_token(b, "bob")
    _send_errors(b, b.dsn(b_key["public_key"], b_project["id"]))
    b_api = httpx.Client(base_url=b.url, headers={"PRIVATE-TOKEN": b_token})
    b_issues = wait_for(lambda: b_api.get("/api/0/projects/acme/shop/issues/").json())
    issue_id = int(b_issues[0]["id"])

    a_project, _ = a.create_project("team/web")
    a_token = _user_and_token(a, "alice")
    a_api = httpx.Client(base_url=a.url, headers={"PRIVATE-TOKEN": a_token})
    seen: list[Any] = []

    def call(method: str, path: str, **kw: Any) -> httpx.Response:
        r = a_api.request(method, f"/api/v4/projects/{a_project['id']}{path}", **kw)
        seen.append(r)
        return r

    listing = httpx.get(f"{a.url}/team/web/-/error_tracking/projects.json")  # not signed in
    assert listing.status_code in (302, 303, 401, 404)
    body = {
        "active": True,
        "integrated": False,
        "api_host": b.url,
        "token": b_token,
        "project": {"slug": "shop", "organization_slug": "acme"},
    }
    linked = call("PUT", "/error_tracking/settings", json=body)
    assert linked.status_code == 200, linked.text
    assert linked.json()["api_url"] == f"{b.url}/api/0/projects/acme/shop/"

    errors = call("GET", "/error_tracking/errors")
    assert errors.status_code == 200, errors.text
    assert [e["id"] for e in errors.json()] == [issue_id]
    details = call("GET", f"/error_tracking/errors/{issue_id}").json()
    assert details["title"] == b_issues[0]["title"] and details["events_count"] == 2
    assert details["latest_event"]["stack_trace"], details
    resolved = call("PUT", f"/error_tracking/errors/{issue_id}", json={"status": "resolved"})
    assert resolved.status_code == 200 and resolved.json()["status"] == "resolved"
    in_b = b_api.get(f"/api/0/issues/{issue_id}/").json()
    assert in_b["status"] == "resolved"
    assert call("GET", "/error_tracking/errors").json() == []
    seen.append(call("GET", "/error_tracking/settings"))

    pages = _ui_pages(
        a,
        [
            "/team/web/-/settings/monitor",
            "/team/web/-/error_tracking?status=all",
            f"/team/web/-/error_tracking/{issue_id}",
            "/team/web/-/error_tracking/projects.json?api_host=" + b.url + "&token=*****",
        ],
    )
    assert b_issues[0]["title"] in pages[1] and b_issues[0]["title"] in pages[2]
    assert '"slug":"shop"' in pages[3]  # the masked token means "the stored one"
    b_api.close()
    a_api.close()
    a.stop()
    everything = [*pages, *(r.text for r in seen), *(str(r.headers) for r in seen), a.log()]
    everything += [p.read_text(errors="replace") for p in a.settings.data_dir.rglob("*.log")]
    assert all(b_token not in text for text in everything)
    assert a.log().strip()  # the log was captured, and holds no token
