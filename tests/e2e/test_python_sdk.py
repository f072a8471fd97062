"""The real Python SDK (the spec's 1.21.0 and the latest 2.x) against a live server.

The programs are tests/sdk/python/<version>/main.py, installed into their own virtualenvs
by ``scripts/install-sdks.sh python`` (``make test`` runs it). Each captures an exception
raised through three in-app functions (twice, same code path), a message, and sessions.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests.helpers import LiveServer, wait_for
from tracebox.store import Database
from tracebox.store.payloads import decode as decompress_payload
from tracebox.store.tables import error_users, errors, events, session_aggregates, sessions

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / ".cache" / "sdk" / "manifest.json"
RELEASE = "shop@2.3.4"


def python_programs() -> list[Any]:
    if not MANIFEST.exists():
        return [pytest.param(None, marks=pytest.mark.skip(reason="run scripts/install-sdks.sh"))]
    programs = json.loads(MANIFEST.read_text())["programs"]
    return [pytest.param(p, id=p["id"]) for p in programs if p["language"] == "python"]


def run_program(program: dict[str, Any], dsn: str) -> list[str]:
    env = {**os.environ, **program.get("env", {})}
    env.update(
        SENTRY_DSN=dsn, TRACEBOX_RELEASE=RELEASE, TRACEBOX_ENV="staging", TRACEBOX_REPEAT="2"
    )
    done = subprocess.run(
        program["cmd"], env=env, capture_output=True, text=True, timeout=120, cwd=program.get("cwd")
    )
    assert done.returncode == 0, f"SDK reported a failure:\n{done.stdout}\n{done.stderr}"
    return [
        line.split("=", 1)[1] for line in done.stdout.splitlines() if line.startswith("event_id=")
    ]


@pytest.mark.slow
@pytest.mark.parametrize("program", python_programs())
def test_python_sdk_exception_message_and_sessions(
    program: dict[str, Any], live_server: LiveServer, db: Database
) -> None:
    project, key = live_server.create_project("acme/shop")
    event_ids = run_program(program, live_server.dsn(key["public_key"], project["id"]))
    assert len(event_ids) == 3  # two exceptions from one code path, one message

    def stored() -> list[sa.RowMapping]:
        with db.read() as conn:
            return list(conn.execute(sa.select(events)).mappings())

    rows = wait_for(lambda: (r := stored()) and len(r) == 3 and r)
    assert {r["event_id"] for r in rows} == {e.replace("-", "") for e in event_ids}
    with db.read() as conn:
        error_rows = {r["type"] or "message": r for r in conn.execute(sa.select(errors)).mappings()}
        users = {r["user_key"] for r in conn.execute(sa.select(error_users)).mappings()}
    assert set(error_rows) == {"ValueError", "message"}

    exc = error_rows["ValueError"]
    assert exc["title"] == "ValueError: invalid quantity: 7"
    assert exc["value"] == "invalid quantity: 7"
    assert exc["culprit"] == "__main__ in validate_quantity"
    assert (exc["events_count"], exc["users_count"]) == (2, 1)  # grouped: one error
    assert (exc["first_release"], exc["last_release"], exc["platform"]) == (
        RELEASE,
        RELEASE,
        "python",
    )
    assert users == {"id:user-42"}
    # grouped by the in-app frames of the chain plus the type, never by line numbers
    components = json.loads(exc["fingerprint"])
    assert components[0] == "exception"
    assert components[-4:] == [
        "__main__:handle_request",
        "__main__:process_order",
        "__main__:validate_quantity",
        "ValueError",
    ]

    exc_event = next(r for r in rows if r["error_id"] == exc["id"])
    payload = decompress_payload(exc_event["payload"])
    frames = payload["exception"]["values"][-1]["stacktrace"]["frames"]
    in_app = [f["function"] for f in frames if f.get("in_app")]
    assert in_app[-3:] == ["handle_request", "process_order", "validate_quantity"]
    assert frames[-1]["context_line"].strip().startswith("raise ValueError")
    assert (exc_event["release"], exc_event["environment"]) == (RELEASE, "staging")
    assert payload["user"]["email"] == "user42@example.com"

    msg = error_rows["message"]
    assert (msg["title"], msg["level"], msg["events_count"]) == (
        "tracebox sdk test message",
        "warning",
        1,
    )

    def session_rows() -> tuple[list[sa.RowMapping], list[sa.RowMapping]]:
        with db.read() as conn:
            return (
                list(conn.execute(sa.select(sessions)).mappings()),
                list(conn.execute(sa.select(session_aggregates)).mappings()),
            )

    single, aggregates = wait_for(lambda: (s := session_rows()) and s[0] and s[1] and s)
    assert [(s["release"], s["environment"], s["status"]) for s in single] == [
        (RELEASE, "staging", "exited")
    ]
    assert single[0]["errors"] >= 2
    assert sum(a["exited"] + a["errored"] for a in aggregates) == 1
    assert {a["release"] for a in aggregates} == {RELEASE}
