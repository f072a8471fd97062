"""Quotas against a live ``tracebox serve``: the real Python SDK backs off when told to,
and a quota holds across two web workers (their counters are shared)."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import orjson
import pytest
from prometheus_client.mmap_dict import MmapedDict

from tests.helpers import LiveServer, start_server, wait_for
from tracebox.config import Settings
from tracebox.ingest.counters import SharedCounters
from tracebox.lifecycle import report
from tracebox.lifecycle.cleanup import CleanupLoop
from tracebox.store import Database, quotas
from tracebox.store.quotas import Quota, SpikeProtection

pytestmark = pytest.mark.slow

# The SDK in a process of its own (its client and transport are global): five messages,
# each flushed; prints which categories its transport is told to hold back.
SDK_PROGRAM = """
import json, sys
import sentry_sdk
sentry_sdk.init(dsn=sys.argv[1], default_integrations=False, auto_session_tracking=False)
held = []
for n in range(5):
    sentry_sdk.capture_message(f"message {n}")
    sentry_sdk.flush(timeout=10)
    held.append(sorted(str(c) for c in sentry_sdk.get_client().transport._disabled_until))
print(json.dumps(held))
"""


# The live server reads the real clock, and a quota counts per minute, hour or UTC day of
# it: the window ends during a run only at a UTC midnight with a day's, at every hour with
# an hour's. (The server has no clock a test could hold still.)
DAY_QUOTA = 86400


def set_quota(db: Database, project_id: int, *limits: Quota) -> None:
    with db.write() as conn:
        quotas.put(conn, project_id, limits, SpikeProtection())


def stored_events(db: Database, project_id: int) -> int:
    return report.project(db, Settings(), project_id).stored[0].items


def refused(db: Database, settings: Settings, project_id: int) -> dict[str, int]:
    counters = SharedCounters.in_data_dir(settings.data_dir)
    CleanupLoop(db, settings, counters=counters).flush_refusals()
    counters.close()
    return report.project(db, settings, project_id).outcomes.refused


def test_the_real_python_sdk_backs_off_on_429(
    live_server: LiveServer, db: Database, settings: Settings
) -> None:
    project, key = live_server.create_project("acme/sdk")
    # A day's quota (see DAY_QUOTA): an hour's ended during the run in the last second of
    # any hour and let a second message through.
    set_quota(db, project["id"], Quota("error", DAY_QUOTA, 1))
    dsn = live_server.dsn(key["public_key"], project["id"])

    done = subprocess.run(
        [sys.executable, "-c", SDK_PROGRAM, dsn], capture_output=True, text=True, timeout=120
    )

    assert done.returncode == 0, done.stderr
    held = json.loads(done.stdout)
    assert held[0] == []  # the first message went through
    assert all("error" in categories for categories in held[1:])  # then events held back
    wait_for(lambda: stored_events(db, project["id"]) == 1)
    # Only the second message reached the server (429); the SDK kept the other three.
    assert refused(db, settings, project["id"]) == {"quota": 1}


def accepting_workers(metrics_dir: Path) -> int:
    """Web worker processes that accepted at least one event (Prometheus' per-process
    multiprocess files)."""
    found = 0
    for path in metrics_dir.glob("counter_*.db"):
        values = MmapedDict.read_all_values_from_file(str(path))  # type: ignore[no-untyped-call]
        accepted = sum(v for k, v, *_ in values if "tracebox_items_accepted" in k)
        found += accepted > 0
    return found


def test_a_quota_holds_across_two_web_workers_within_ten_percent(
    settings: Settings, db: Database
) -> None:
    server = start_server(settings, workers=2)
    try:
        project, key = server.create_project("acme/busy")
        set_quota(db, project["id"], Quota("error", DAY_QUOTA, 200))
        url = f"{server.url}/api/{project['id']}/store/"
        auth = {"X-Sentry-Auth": f"Sentry sentry_key={key['public_key']}"}

        def send(n: int) -> int:
            body = orjson.dumps({"event_id": f"{n:032x}", "message": f"busy {n}"})
            return httpx.post(url, content=body, headers=auth, timeout=30).status_code

        with ThreadPoolExecutor(16) as pool:  # a new connection per request: both workers serve
            statuses = list(pool.map(send, range(400)))
        accepted = statuses.count(200)
        assert statuses.count(429) == 400 - accepted
        assert abs(accepted - 200) <= 20, accepted  # one worker's share alone would be 400
        assert accepting_workers(settings.data_dir / "metrics") == 2
    finally:
        server.stop()
