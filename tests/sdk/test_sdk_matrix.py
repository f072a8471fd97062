"""The SDK compatibility matrix: every real-SDK program against one live server.

One ``tracebox serve`` on SQLite per module; per program a fresh project and client key,
the program run once with TRACEBOX_REPEAT=2 (it exits non-zero on any transport failure
its SDK reports), then checks through the REST API (tests/sdk/matrix.py). The programs
reach the server through a byte-for-byte relay (tests/sdk/wiretap.py) that records the
endpoint, compression and authentication the server received; the endpoints are
cross-checked with the server's own /-/metrics counters and the manifest's wire notes.

With TRACEBOX_SDK_RESULTS=path each program's result is merged into that JSON file, from
which ``make sdk-matrix`` writes docs/sdk-compatibility.md. Needs
``scripts/install-sdks.sh`` (``make test`` runs it); without a manifest the module skips.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import LiveServer, cli, start_server
from tests.sdk import matrix
from tests.sdk.api_client import ErrorTrackingClient
from tests.sdk.matrix_results import record, results_path, wire_summary
from tests.sdk.run_programs import DEFAULT_MANIFEST, parse_stdout
from tests.sdk.wiretap import Wiretap
from tracebox.config import Settings

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RELEASE = "sdk-matrix@1.0.0"
ENVIRONMENT = "matrix"
REPEAT = 2
PROGRAM_TIMEOUT = 180


def _programs() -> list[Any]:
    if not DEFAULT_MANIFEST.is_file():
        skip = pytest.mark.skip(reason=f"no {DEFAULT_MANIFEST} (run scripts/install-sdks.sh)")
        return [pytest.param(None, marks=skip, id="no-manifest")]
    return [
        pytest.param(p, id=p["id"]) for p in json.loads(DEFAULT_MANIFEST.read_text())["programs"]
    ]


@dataclass
class Matrix:
    server: LiveServer
    api: ErrorTrackingClient
    tap: Wiretap

    def dsn(self, public_key: str, project_id: int) -> str:
        path = f"/api/v4/error_tracking/collector/{project_id}"
        return f"http://{public_key}@127.0.0.1:{self.tap.port}{path}"

    def events_by_endpoint(self) -> dict[str, int]:
        response = httpx.get(f"{self.server.url}/-/metrics", timeout=10)
        response.raise_for_status()
        return matrix.events_by_endpoint(response.text)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Matrix]:
    base = tmp_path_factory.mktemp("sdk-matrix")
    settings = Settings(
        data_dir=base / "data",
        database_url="",  # SQLite in the data directory
        spool_commit_interval_ms=0.5,
        digest_poll_interval_ms=5,
    )
    server = start_server(settings)
    try:
        token = cli(settings, "token", "create", "--user", "root", "--scope", "api")["token"]
        api = ErrorTrackingClient(server.url, token)
        tap = Wiretap(server.port)
        yield Matrix(server, api, tap)
        tap.close()
        api.close()
    finally:
        server.stop()


def run_program(program: dict[str, Any], dsn: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **program.get("env", {})}
    env.pop("TRACEBOX_SDK_DEBUG", None)
    env.update(
        SENTRY_DSN=dsn,
        TRACEBOX_RELEASE=RELEASE,
        TRACEBOX_ENV=ENVIRONMENT,
        TRACEBOX_REPEAT=str(REPEAT),
    )
    return subprocess.run(
        program["cmd"],
        cwd=program.get("cwd", ROOT),
        env=env,
        capture_output=True,
        text=True,
        timeout=PROGRAM_TIMEOUT,
    )


@pytest.mark.parametrize("program", _programs())
def test_sdk_program(program: dict[str, Any], live: Matrix) -> None:
    result = _new_result(program)
    started = time.monotonic()
    try:
        _exercise(program, live, result)
    except Exception as e:  # recorded as a failure too, then reported by pytest
        result["checks"]["harness"] = [f"{type(e).__name__}: {e}"]
        raise
    finally:
        result["seconds"] = round(time.monotonic() - started, 1)
        failed = {name: problems for name, problems in result["checks"].items() if problems}
        result["status"] = "fail" if failed else "pass"
        if path := results_path():
            record(path, result)
    assert not failed, json.dumps(failed, indent=2)


def _new_result(program: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "language", "sdk", "sdk_name", "version", "spec_version", "tested_as", "note")
    return {
        **{k: program.get(k) for k in keys},
        "replay": bool(program.get("replay")),
        "manifest_wire": program.get("wire"),
        "checks": {},
        "items_verified": [],
    }


def _exercise(program: dict[str, Any], live: Matrix, result: dict[str, Any]) -> None:
    checks = result["checks"]
    if not program.get("installed"):
        checks["installed"] = [f"not installed: run scripts/install-sdks.sh {program['language']}"]
        return
    expected = matrix.expected_for(program, ROOT)
    project, key = live.server.create_project(f"matrix/{program['id'].replace('.', '-')}")
    before = live.events_by_endpoint()
    live.tap.take()
    done = run_program(program, live.dsn(key["public_key"], project["id"]))
    result["wire"] = wire = wire_summary(live.tap.take())
    printed = _check_run(done, checks)
    _check_api(live.api, project["id"], program, expected, printed, result)
    events = len(printed.exceptions) + len(printed.messages)
    checks["endpoints"] = _check_endpoints(program, wire, before, live.events_by_endpoint(), events)
    result["items_verified"] = _items_verified(checks, wire, expected.sessions)


@dataclass
class Printed:
    """The event ids a program printed, by kind."""

    exceptions: list[str]
    messages: list[str]


def _check_run(done: subprocess.CompletedProcess[str], checks: dict[str, list[str]]) -> Printed:
    """Exit code 0 (no transport failure reported by the SDK); the printed event ids."""
    checks["exit code"] = (
        [] if done.returncode == 0 else [f"exit {done.returncode}: {done.stderr.strip()[-800:]}"]
    )
    events, _ = parse_stdout(done.stdout)
    printed = Printed(
        [i for kind, i in events if kind == "exception"],
        [i for kind, i in events if kind == "message"],
    )
    counts = (len(printed.exceptions), len(printed.messages))
    checks["printed ids"] = (
        []
        if counts == (REPEAT, 1)
        else [f"printed {events}, expected {REPEAT} exceptions, 1 message"]
    )
    return printed


def _check_api(
    api: ErrorTrackingClient,
    pid: int,
    program: dict[str, Any],
    expected: matrix.Expected,
    printed: Printed,
    result: dict[str, Any],
) -> None:
    """Everything the program sent, as the REST API shows it once digested."""
    checks = result["checks"]
    snap = matrix.settle(
        lambda: matrix.snapshot(api, pid), lambda s: matrix.is_complete(s, expected, REPEAT)
    )
    result["api"] = {"errors": snap.errors, "releases": snap.releases}
    checks["exception"] = matrix.check_exception(snap, expected)
    event = matrix.latest_exception_event(snap, expected, api, pid)
    checks["frames"] = matrix.check_frames(event, expected)
    checks["event"] = matrix.check_event(event, program, RELEASE, ENVIRONMENT)
    checks["grouping"] = matrix.check_grouping(snap, expected, api, pid, printed.exceptions)
    message_id = printed.messages[0] if printed.messages else ""
    checks["message"] = matrix.check_message(snap, api, pid, message_id)
    checks["sessions"] = matrix.check_sessions(snap, expected, RELEASE, ENVIRONMENT)


def _check_endpoints(
    program: dict[str, Any],
    wire: dict[str, Any],
    before: dict[str, int],
    after: dict[str, int],
    events: int,
) -> list[str]:
    """The endpoint the relay saw events go to is the one the manifest documents, and the
    one the server counted them on."""
    problems = []
    seen = wire["endpoints"].get("event", [])
    documented = program["wire"]["errors"]
    if seen != [documented]:
        problems.append(f"events went to {seen}, the manifest says {documented!r}")
    counted = {e: n - before.get(e, 0) for e, n in after.items() if n > before.get(e, 0)}
    if sorted(counted) != seen or sum(counted.values()) != events:
        problems.append(f"server counted events {counted}; {events} printed, relayed to {seen}")
    return problems


def _items_verified(checks: dict[str, list[str]], wire: dict[str, Any], sessions: int) -> list[str]:
    event_checks = ("exception", "frames", "event", "grouping", "message")
    verified = ["event"] if not any(checks[c] for c in event_checks) else []
    if sessions and not checks["sessions"]:
        verified += [t for t in ("session", "sessions") if t in wire["endpoints"]]
    return verified
