"""Issue 11's "Done when": secrets sent by the real Python SDK and by a hand-made envelope
reach the database, the REST API, the web UI and the server's log only as [Filtered].

The database is searched byte for byte: the SQLite file after a WAL checkpoint, and a
pg_dump of the PostgreSQL database. Event payloads are stored zstd-compressed, where a
secret's bytes would not show, so every payload is also decompressed and searched.
"""

from __future__ import annotations

import html
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import sqlalchemy as sa

from tests.helpers import LiveServer, wait_for
from tests.privacy import secrets as s
from tracebox.accounts import personal_tokens, users
from tracebox.models import AccessLevel
from tracebox.store import Database, members
from tracebox.store.payloads import decode as decode_payload
from tracebox.store.tables import events

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse battery"
ENVELOPE_EVENT_ID = "e" * 32


def send_envelope(server: LiveServer, project_id: int, public_key: str) -> None:
    payload = orjson.dumps(s.raw_event(ENVELOPE_EVENT_ID))
    body = b"\n".join(
        [
            orjson.dumps({"event_id": ENVELOPE_EVENT_ID}),
            orjson.dumps({"type": "event", "length": len(payload)}),
            payload,
        ]
    )
    r = httpx.post(
        f"{server.url}/api/v4/error_tracking/collector/api/{project_id}/envelope/",
        content=body,
        headers={"X-Sentry-Auth": f"Sentry sentry_key={public_key}, sentry_version=7"},
        timeout=10,
    )
    assert r.status_code == 200, r.text


def run_sdk(dsn: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.privacy.sdk_program"],
        env={"SENTRY_DSN": dsn, "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [line.split("=", 1)[1] for line in done.stdout.splitlines() if "event_id=" in line]


def stored_payloads(db: Database) -> list[dict[str, Any]]:
    with db.read() as conn:
        return [decode_payload(p) for (p,) in conn.execute(sa.select(events.c.payload))]


def reader(db: Database, project_id: int) -> tuple[str, str]:
    """A Reporter of the project: (personal access token, username)."""
    with db.write() as conn:
        user = users.create_user(
            conn,
            username="auditor",
            email="auditor@example.com",
            name="A",
            password=PASSWORD,
            is_admin=False,
        )
        members.add(conn, project_id, user.id, AccessLevel.MAINTAINER)
        _, token = personal_tokens.issue(conn, user.id, name="t", scopes=["api"], expires_on=None)
    return token, user.username


def api_text(server: LiveServer, token: str, project_id: int) -> str:
    base = f"{server.url}/api/v4/projects/{project_id}/error_tracking"
    headers = {"PRIVATE-TOKEN": token}
    found = httpx.get(f"{base}/errors?status=all", headers=headers, timeout=10)
    assert found.status_code == 200
    texts = [found.text]
    for error in found.json():
        texts.append(httpx.get(f"{base}/errors/{error['id']}", headers=headers, timeout=10).text)
        texts.append(
            httpx.get(f"{base}/errors/{error['id']}/events", headers=headers, timeout=10).text
        )
    return "\n".join(texts)


def ui_text(server: LiveServer, username: str, path: str) -> str:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        page = client.get("/users/sign_in").text
        csrf = re.search(r'name="_csrf" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
        client.post(
            "/users/sign_in", data={"_csrf": csrf, "username": username, "password": PASSWORD}
        )
        listing = client.get(f"/{path}/-/error_tracking?status=all").text
        pages = [listing]
        for error_id in sorted(set(re.findall(rf"/{path}/-/error_tracking/(\d+)", listing))):
            pages.append(client.get(f"/{path}/-/error_tracking/{error_id}").text)
    return html.unescape("\n".join(pages))


def database_bytes(server: LiveServer, db: Database) -> bytes:
    """The whole database as bytes, after the server stopped."""
    url = db.engine.url
    if url.get_backend_name() == "sqlite":
        path = Path(str(url.database))
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return path.read_bytes()
    pg_dump = shutil.which("pg_dump") or next(Path("/usr/lib/postgresql").glob("*/bin/pg_dump"))
    plain = url.set(drivername="postgresql").render_as_string(hide_password=False)
    done = subprocess.run([str(pg_dump), "--no-owner", plain], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def leaks(text: str | bytes) -> list[str]:
    data = text.encode() if isinstance(text, str) else text
    return [secret for secret in s.ALL if secret.encode() in data]


@pytest.mark.slow
def test_no_secret_reaches_the_database_the_api_the_ui_or_the_log(
    live_server: LiveServer, db: Database
) -> None:
    project, key = live_server.create_project("acme/shop")
    send_envelope(live_server, project["id"], key["public_key"])
    sdk_ids = run_sdk(live_server.dsn(key["public_key"], project["id"]))
    assert len(sdk_ids) == 2  # the exception through the WSGI middleware, and a message
    wait_for(lambda: len(stored_payloads(db)) == 3, timeout=60)

    payloads = stored_payloads(db)
    assert leaks(orjson.dumps(payloads)) == [], _where(payloads)
    sdk_event = next(
        p
        for p in payloads
        if p.get("request", {}).get("method") == "POST" and p["event_id"] != ENVELOPE_EVENT_ID
    )
    headers = dict(sdk_event["request"]["headers"])
    assert headers["Authorization"] == "[Filtered]" and headers["Cookie"] == "[Filtered]"
    frame_vars = sdk_event["exception"]["values"][-1]["stacktrace"]["frames"][-1]["vars"]
    assert frame_vars["password"] == "[Filtered]" and frame_vars["api_key"] == "[Filtered]"
    assert "[Filtered]" in frame_vars["card_number"] and "[Filtered]" in frame_vars["note"]
    assert sdk_event["user"]["ip_address"] == "127.0.0.1"  # {{auto}}: stored by default

    token, username = reader(db, project["id"])
    assert leaks(api_text(live_server, token, project["id"])) == []
    page = ui_text(live_server, username, "acme/shop")
    assert leaks(page) == []
    assert page.count('class="scrubbed"') >= 10
    assert leaks(live_server.log()) == []

    live_server.stop()
    dumped = database_bytes(live_server, db)
    assert b"privacy_settings" in dumped or b"error_tracking" in dumped  # it is the database
    assert leaks(dumped) == []
    assert leaks(orjson.dumps(stored_payloads(db))) == []


def _where(value: Any, path: str = "") -> list[str]:
    """Paths of the strings that hold a secret, for the failure message."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _where(v, f"{path}.{k}") + _where(k, path)]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _where(v, f"{path}[{i}]")]
    return [f"{path}: {value!r}"[:300]] if leaks(str(value)) else []
