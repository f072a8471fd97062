"""``tracebox cleanup --dry-run`` shows what would go; ``tracebox cleanup`` removes it;
``tracebox stats`` shows the usage and the disk budget."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers import cli, tracebox_env
from tests.lifecycle.helpers import DAY, event, event_ids, project, store
from tracebox.config import Settings
from tracebox.lifecycle.batches import MAX_PACE_S
from tracebox.store import Database


def test_cleanup_dry_run_then_for_real(db: Database, settings: Settings) -> None:
    p = project(db, "acme/web")
    now = time.time()
    store(db, p, *[event("old") for _ in range(3)], at=now - 120 * DAY)
    # one error of 1,008 events: its first and its latest 1,000 stay, 7 go
    store(db, p, *[event("hot") for _ in range(8)], at=now - 3600)
    store(db, p, *[event("hot") for _ in range(1000)], at=now - 60)

    plan = cli(settings, "cleanup", "--dry-run")
    assert plan["projects"] == [
        {
            "project": "acme/web",
            "max_age_days": 90,
            "max_events_per_error": 1000,
            "events": 1011,
            "by_age": 3,
            "by_count": 7,
        }
    ]
    assert len(event_ids(db, p)) == 1011  # nothing removed yet

    done = cli(settings, "cleanup")
    assert done["removed"] == {"age": 3, "count": 7, "disk_budget": 0}
    assert len(event_ids(db, p)) == 1001
    assert done["lock"]["longest_ms"] > 0

    stats = cli(settings, "stats")
    assert stats["storage"]["stored"][0]["kind"] == "events"
    assert stats["storage"]["stored"][0]["items"] == 1001
    assert stats["storage"]["outcomes"]["expired"] == {"age": 3, "count": 7}
    assert stats["storage"]["largest"][0]["path"] == "acme/web"


def test_sigterm_stops_a_cleanup_after_its_transaction_and_it_reports_so_far(
    db: Database, settings: Settings
) -> None:
    """A long cleanup (here one that paces itself to the longest pause after every
    transaction) can be stopped: the transaction in hand commits, the pause ends at once,
    and the report says what went and that it was interrupted."""
    if db.engine.dialect.name != "sqlite":
        pytest.skip("the write budget paces SQLite's checkpoints; PostgreSQL has none")
    p = project(db, "acme/web")
    store(db, p, *[event("old") for _ in range(300)], at=time.time() - 120 * DAY)
    env = tracebox_env(settings, TRACEBOX_CLEANUP_WRITE_MIB_PER_S="0.001")
    cleanup = subprocess.Popen(
        [sys.executable, "-m", "tracebox", "cleanup"], env=env, stdout=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while len(event_ids(db, p)) == 300 and cleanup.poll() is None:
            assert time.monotonic() < deadline, "the first batch never went"
            time.sleep(0.02)
        signalled = time.monotonic()
        cleanup.send_signal(signal.SIGTERM)
        out, _ = cleanup.communicate(timeout=60)
    finally:
        cleanup.kill()
    report = json.loads(out)

    assert time.monotonic() - signalled < MAX_PACE_S - 1  # not after the pause
    assert report["interrupted"] is True
    left = len(event_ids(db, p))
    assert 0 < report["removed"]["age"] == 300 - left < 300
    assert report["lock"]["paced_ms"] > 0
