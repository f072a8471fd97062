"""Spec 4.2 end to end over HTTP against a live server, with the real Python SDK.

1. create an access token with the ``api`` scope; 2. POST a new client key; 3. GET the
list and find it, note the old key's id; 4. DELETE the old key. Then the old DSN gets
401 at once (the API's delete path makes the serving node's ingest forget the key; other
nodes follow within TRACEBOX_KEY_CACHE_SECONDS) and the new one is accepted by the SDK.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from tests.helpers import LiveServer, cli, free_port, start_server, tracebox_env, wait_for
from tracebox.config import Settings

pytestmark = pytest.mark.slow


@pytest.fixture
def server(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveServer]:
    # A long cache TTL: the old DSN must fail at once because the delete path makes ingest
    # forget the key, not because a short TTL ran out.
    monkeypatch.setenv("TRACEBOX_KEY_CACHE_SECONDS", "300")
    port = free_port()
    own = dataclasses.replace(settings, external_url=f"http://127.0.0.1:{port}")
    live = start_server(own, port=port)
    yield live
    live.stop()


def send_test_event(settings: Settings, dsn: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracebox", "send-test-event", dsn],
        env=tracebox_env(settings),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_dsn_rotation_walk(server: LiveServer) -> None:
    password_file = server.settings.data_dir / "initial_root_password"  # first start
    assert password_file.stat().st_mode & 0o777 == 0o600
    assert password_file.read_text().strip() in server.log()  # printed once, too
    created = cli(server.settings, "token", "create", "--user", "root", "--scope", "api")
    assert created["token"].startswith("tbpat-") and created["scopes"] == ["api"]
    with httpx.Client(
        base_url=f"{server.url}/api/v4", headers={"PRIVATE-TOKEN": created["token"]}, timeout=10
    ) as api:
        assert api.post("/projects", json={"name": "Web", "path": "acme/web"}).status_code == 201
        settings = api.put(
            "/projects/acme%2Fweb/error_tracking/settings",
            json={"active": True, "integrated": True},
        )
        assert settings.status_code == 200, settings.text
        [old] = api.get("/projects/acme%2Fweb/error_tracking/client_keys").json()
        first = send_test_event(server.settings, old["sentry_dsn"])  # also warms the key cache
        assert first.returncode == 0, first.stdout + first.stderr

        new = api.post("/projects/acme%2Fweb/error_tracking/client_keys")
        assert new.status_code == 201, new.text
        new_key = new.json()
        assert set(new_key) >= {"id", "active", "public_key", "sentry_dsn"}
        listed = api.get("/projects/acme%2Fweb/error_tracking/client_keys")
        assert new_key["id"] in [k["id"] for k in listed.json()]
        deleted = api.delete(f"/projects/acme%2Fweb/error_tracking/client_keys/{old['id']}")
        assert deleted.status_code == 200, deleted.text
        assert deleted.json()["public_key"] == old["public_key"]

        auth = {"X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={old['public_key']}"}
        project_id = old["sentry_dsn"].rsplit("/", 1)[1]
        refused = httpx.post(
            f"{server.url}/api/{project_id}/store/", json={"message": "x"}, headers=auth
        )
        assert refused.status_code == 401, refused.text
        assert send_test_event(server.settings, old["sentry_dsn"]).returncode == 1
        accepted = send_test_event(server.settings, new_key["sentry_dsn"])
        assert accepted.returncode == 0, accepted.stdout + accepted.stderr
        assert "accepted" in accepted.stdout

        def both_events_stored() -> bool:
            errors = api.get("/projects/acme%2Fweb/error_tracking/errors").json()
            return bool(errors) and errors[0]["events_count"] == 2

        wait_for(both_events_stored)
