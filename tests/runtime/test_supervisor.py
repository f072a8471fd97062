"""Background units: restarted with backoff when they crash, seen through their heartbeats,
reported by /-/health (issue 9, defect 4). The whole chain with real processes is in
tests/durability/test_digest_crash.py."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import orjson
import pytest
from starlette.testclient import TestClient

from tests.helpers import modules_loaded, wait_for
from tests.runtime import flaky_unit
from tracebox.app import create_app
from tracebox.config import Settings
from tracebox.spool import progress
from tracebox.store import Database
from tracebox.supervisor import backoff, heartbeat, host
from tracebox.supervisor.units import UNITS, Unit, UnitContext


def test_backoff_doubles_up_to_a_minute_and_resets_after_a_healthy_run() -> None:
    b = backoff.Backoff()
    assert [b.delay(ran_for=0.1) for _ in range(8)] == [1, 2, 4, 8, 16, 32, 60, 60]
    assert b.delay(ran_for=120) == 1


def test_a_crashing_unit_is_restarted_and_its_heartbeat_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(backoff, "FIRST_S", 0.05)
    flaky_unit.runs.clear()
    settings = Settings(data_dir=tmp_path)
    stop = threading.Event()
    beat = heartbeat.Heartbeat(tmp_path, "flaky", restarts=0)
    ctx = UnitContext("flaky", settings, Database("sqlite://"), stop, beat.beat)
    unit = Unit("flaky", "tests.runtime.flaky_unit:run_unit")
    thread = threading.Thread(target=host._supervise, args=(unit, ctx, beat))
    thread.start()
    try:
        wait_for(lambda: len(flaky_unit.runs) == 2)
        seen = wait_for(lambda: heartbeat.read(tmp_path, "flaky"))
        assert (seen.state, seen.restarts, seen.pid) == ("running", 1, os.getpid())
        assert seen.error == "ValueError: first run fails"
        assert heartbeat.is_alive(seen, timeout=30, now=time.time())
    finally:
        stop.set()
        thread.join(10)
    stopped = heartbeat.read(tmp_path, "flaky")
    assert stopped is not None and stopped.state == "stopped"
    assert not heartbeat.is_alive(stopped, timeout=30, now=time.time())


@pytest.fixture
def client(settings: Settings, db: Database) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def beat_as(settings: Settings, pid: int, at: float, unit: str = "digest") -> None:
    """A unit's heartbeat file as a background process with ``pid`` wrote it."""
    path = heartbeat.run_dir(settings.data_dir) / f"{unit}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(asdict(heartbeat.Beat(unit, pid, at, at - 10, 2, "running", ""))))


def test_health_reports_the_digest_alive_dead_or_silent(
    client: TestClient, settings: Settings
) -> None:
    r = client.get("/-/health")
    assert r.status_code == 503  # no digest has ever beaten here
    assert r.json()["units"]["digest"] == {"alive": False, "state": "not started", "restarts": 0}

    for unit in UNITS:  # every registered unit alive
        beat_as(settings, os.getpid(), time.time(), unit.name)
    r = client.get("/-/health")
    assert r.status_code == 200, r.json()
    body = r.json()
    assert (body["status"], body["database"], body["problems"]) == ("ok", True, [])
    assert body["units"]["digest"]["alive"] and body["units"]["digest"]["restarts"] == 2
    assert body["digest_lag"] == {"seconds": 0.0, "bytes": 0}

    beat_as(settings, 2**22 + 12345, time.time())  # no such process: dead at once
    r = client.get("/-/health")
    assert r.status_code == 503
    assert r.json()["problems"] == ["digest is not running"]
    assert r.json()["units"]["digest"]["state"] == "dead"

    beat_as(settings, os.getpid(), time.time() - settings.heartbeat_timeout_seconds - 1)
    assert client.get("/-/health").status_code == 503  # alive but silent: stuck


def test_health_and_metrics_show_the_lag_the_spool_holds(
    client: TestClient, settings: Settings
) -> None:
    for unit in UNITS:
        beat_as(settings, os.getpid(), time.time(), unit.name)
    old = time.time_ns() - int((settings.health_max_lag_seconds + 60) * 1e9)
    segment = settings.spool_dir / f"{old:020d}-host-1-000001.seg"
    segment.write_bytes(b"TBSPOOL\x01" + b"x" * 1000)  # nothing of it digested
    r = client.get("/-/health")
    assert r.status_code == 503
    lag = r.json()["digest_lag"]
    assert lag["bytes"] == 1000 and lag["seconds"] > settings.health_max_lag_seconds
    assert r.json()["problems"][0].startswith("the digest is ")
    metrics = client.get("/-/metrics").text
    assert "tracebox_digest_lag_bytes 1000.0" in metrics
    assert 'tracebox_unit_up{unit="digest"} 1.0' in metrics

    progress.publish(settings.spool_dir, {segment.name: 1008}, {segment.name: time.time()})
    assert client.get("/-/health").json()["digest_lag"] == {"seconds": 0.0, "bytes": 0}


def test_the_background_units_load_no_http_client_crypto_or_templates() -> None:
    """The background process's memory counts toward the server's 250 MB (issue 10):
    httpx, cryptography and jinja2 (~18 MB) load when an alert is first delivered, and
    symbolic when a source map is first parsed."""
    setup = "from tracebox.supervisor.units import UNITS; [unit.load() for unit in UNITS]"
    assert modules_loaded(setup, ("httpx", "cryptography", "jinja2", "symbolic")) == []


def test_the_background_units_run_with_the_young_generation_collected_less_often(
    tmp_path: Path,
) -> None:
    """The digest holds thousands of objects per part until it writes them: with Python's
    700 allocations between collections it spent ~3% of its time collecting (issue 10)."""
    code = (
        "import gc, sys; from tracebox.config import Settings;"
        "from tracebox.supervisor import host; from tracebox.supervisor.units import Unit;"
        "seen = [];"
        "probe = lambda ctx: (seen.append(gc.get_threshold()[0]), ctx.stop.set());"
        "host.UNITS = (Unit('probe', '__main__:probe'),);"
        f"host.run_background(Settings(data_dir={str(tmp_path)!r}), spawned=False);"
        "print(seen[0])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert int(out.stdout.strip()) == host.GC_THRESHOLD > gc_default_threshold()


def gc_default_threshold() -> int:
    out = subprocess.run(
        [sys.executable, "-c", "import gc; print(gc.get_threshold()[0])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.strip())
