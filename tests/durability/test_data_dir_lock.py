"""Issue 9, defect 7: a second instance on a data directory in use exits at once, touching
nothing (before, it wiped the running node's metrics and ran a second digest)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.durability.scenarios import serving
from tests.helpers import free_port, tracebox_env
from tracebox.config import Settings


def run_tracebox(settings: Settings, *args: str, timeout: float = 30) -> tuple[int, str]:
    """Run ``tracebox ARGS`` in its own session; kill the whole session if it overstays."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tracebox", *args],
        env=tracebox_env(settings),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        return -1, output
    return process.returncode, output


def snapshot(directory: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in directory.iterdir()}


@pytest.mark.slow
def test_a_second_instance_exits_at_once_and_touches_nothing(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", digest_poll_interval_ms=5)
    with serving(settings) as first:
        project, key = first.create_project("acme/web")
        metrics_dir = settings.data_dir / "metrics"
        assert httpx.get(f"{first.url}/-/metrics").status_code == 200
        before = snapshot(metrics_dir)

        for args in (("serve", "--port", str(free_port())), ("digest",), ("digest", "--once")):
            status, output = run_tracebox(settings, *args, timeout=20)
            assert status == 1, output
            assert "is in use by another tracebox process" in output
            assert f"(pid {first.process.pid})" in output

        assert snapshot(metrics_dir) == before
        assert httpx.get(f"{first.url}/-/metrics").status_code == 200
        r = httpx.post(
            f"{first.url}/api/{project['id']}/store/",
            content=b'{"message": "still here"}',
            headers={"X-Sentry-Auth": f"Sentry sentry_key={key['public_key']}"},
        )
        assert r.status_code == 200
