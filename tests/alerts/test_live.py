"""Alerts on a live ``tracebox serve``: the real Python SDK's error emailed through a real
SMTP server with links that open the error, the CLI test command, and exactly one
delivery after a SIGKILL of the whole server between trigger and delivery."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.alerts.receivers import Receiver, http_receiver, smtp_server
from tests.helpers import (
    SDK_CACHE,
    LiveServer,
    cli,
    free_port,
    missing,
    start_server,
    tracebox_env,
    wait_for,
)
from tracebox.config import Settings
from tracebox.store import Database

ROOT = Path(__file__).resolve().parents[2]
CSRF = re.compile(r'name="_csrf" value="([^"]+)"')
PASSWORD = "a long admin password"


def python_sdk() -> dict[str, Any]:
    manifest = SDK_CACHE / "manifest.json"
    if not manifest.exists():
        missing(f"{manifest} is missing (scripts/install-sdks.sh)")
    programs = json.loads(manifest.read_text())["programs"]
    return next(p for p in programs if p["id"] == "python-2.75.0")


def admin(server: LiveServer) -> tuple[dict[str, Any], str]:
    user = cli(
        server.settings,
        "user",
        "create",
        "ada",
        "--email",
        "ada@example.com",
        "--password",
        PASSWORD,
        "--admin",
    )
    token = cli(server.settings, "token", "create", "--user", "ada", "--scope", "api")["token"]
    return user, token


def signed_in(server: LiveServer) -> httpx.Client:
    client = httpx.Client(base_url=server.url, timeout=10)
    page = client.get("/users/sign_in").text
    token = CSRF.search(page)
    assert token
    form = {"_csrf": token.group(1), "username": "ada", "password": PASSWORD}
    assert client.post("/users/sign_in", data=form).status_code == 303
    return client


@pytest.mark.slow
def test_the_python_sdk_error_arrives_by_email_and_its_link_opens_it(
    settings: Settings, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = python_sdk()
    closing: list[httpx.Client] = []
    with smtp_server() as box:
        for name, value in {
            "SMTP_HOST": "127.0.0.1",
            "SMTP_PORT": str(box.port),
            "SMTP_SECURITY": "none",
            "SMTP_FROM": "Tracebox <alerts@tracebox.test>",
        }.items():
            monkeypatch.setenv(f"TRACEBOX_{name}", value)
        port = free_port()
        settings.external_url = f"http://127.0.0.1:{port}"  # links in emails lead here
        server = start_server(settings, port=port)
        try:
            project, key = server.create_project("acme/shop")
            user, token = admin(server)
            api = httpx.Client(
                base_url=f"{server.url}/api/v4", headers={"PRIVATE-TOKEN": token}, timeout=10
            )
            closing.append(api)
            members = f"/projects/{project['id']}/members"
            assert api.post(members, json={"user_id": user["id"], "access_level": 40}).is_success
            body = {
                "name": "Every new error",
                "trigger": "new_error",
                "actions": [{"channel": "email"}],
            }
            rule = api.post(f"/projects/{project['id']}/error_tracking/alert_rules", json=body)
            assert rule.status_code == 201, rule.text
            env = {
                **os.environ,
                **program.get("env", {}),
                "SENTRY_DSN": server.dsn(key["public_key"], project["id"]),
                "TRACEBOX_RELEASE": "shop@2.3.4",
                "TRACEBOX_ENV": "staging",
            }
            done = subprocess.run(
                program["cmd"],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                cwd=program.get("cwd"),
            )
            assert done.returncode == 0, done.stdout + done.stderr
            wait_for(lambda: len(box.messages) >= 2, timeout=30)  # an exception, a message
            subjects = sorted(m["Subject"] for m in box.messages)
            assert subjects == [
                "[acme/shop] New error: ValueError: invalid quantity: 7",
                "[acme/shop] New error: tracebox sdk test message",
            ]
            mail = next(m for m in box.messages if "ValueError" in m["Subject"])
            assert mail["To"] == "ada@example.com"
            text = mail.get_body(("plain",)).get_content()
            assert "main.py in validate_quantity at line" in text  # the top frame
            link = re.search(rf"{re.escape(server.url)}/acme/shop/-/error_tracking/\d+", text)
            assert link, text
            browser = signed_in(server)
            closing.append(browser)
            page = browser.get(link.group(0))
            assert page.status_code == 200
            assert "invalid quantity: 7" in page.text
            settings_link = f"{server.url}/acme/shop/-/alerts/notifications"
            assert settings_link in text
            assert browser.get(settings_link).status_code == 200

            tested = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "tracebox",
                    "alerts",
                    "test",
                    "acme/shop",
                    "Every new error",
                ],
                env=tracebox_env(server.settings),
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert tested.returncode == 0, tested.stdout + tested.stderr
            assert json.loads(tested.stdout)["results"][0]["ok"] is True
            wait_for(lambda: len(box.messages) == 3)
            assert box.messages[-1]["Subject"].startswith("[acme/shop] Test notification")
        finally:
            for client in closing:
                client.close()
            server.stop()


@pytest.mark.slow
def test_sigkill_between_trigger_and_delivery_still_delivers_once(
    settings: Settings, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACEBOX_ALERT_ALLOW_LOCAL_NETWORK", "true")
    monkeypatch.setenv("TRACEBOX_ALERT_RETRY_INITIAL_SECONDS", "0.2")
    monkeypatch.setenv("TRACEBOX_ALERT_RETRY_MAX_SECONDS", "0.5")
    monkeypatch.setenv("TRACEBOX_ALERT_LEASE_SECONDS", "3")
    with http_receiver() as probe:
        port = probe.port  # a free port; nothing listens there until the restart
    server = start_server(settings)
    try:
        project, key = server.create_project("acme/durable")
        _, token = admin(server)
        api = httpx.Client(base_url=f"{server.url}/api/v4", headers={"PRIVATE-TOKEN": token})
        hook = {"channel": "webhook", "target": f"http://127.0.0.1:{port}/hook"}
        body = {"name": "hook", "trigger": "new_error", "actions": [hook]}
        assert (
            api.post(f"/projects/{project['id']}/error_tracking/alert_rules", json=body).status_code
            == 201
        )
        event = {"event_id": uuid.uuid4().hex, "message": "checkout failed", "level": "error"}
        auth = {"X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={key['public_key']}"}
        with httpx.Client() as ingest:
            stored = ingest.post(
                f"{server.url}/api/{project['id']}/store/", json=event, headers=auth
            )
        assert stored.status_code == 200
        deliveries = f"/projects/{project['id']}/error_tracking/alert_deliveries"
        # The trigger is committed; the receiver is down, so the delivery waits to retry.
        wait_for(lambda: [d for d in api.get(deliveries).json() if d["attempts"] >= 1])
        api.close()
        server.kill()
    except BaseException:
        server.stop()
        raise
    with http_receiver(Receiver(), port=port) as receiver:
        server = start_server(settings)
        try:
            api = httpx.Client(base_url=f"{server.url}/api/v4", headers={"PRIVATE-TOKEN": token})
            wait_for(lambda: api.get(deliveries).json()[0]["status"] == "sent", timeout=30)
            time.sleep(1.0)  # a second send, if there were one, would come now
        finally:
            api.close()
            server.stop()
    assert len(receiver.requests) == 1
    assert b'"title":"checkout failed"' in receiver.requests[0].body
