"""Test helpers: a live ``tracebox serve`` on a free port, projects with client keys."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import httpx
import pytest

from tracebox.config import Settings

SERVER_START_TIMEOUT = 120.0  # a bound, not a measurement: a loaded CI machine is slow
# ``modules_loaded``'s setup for a web worker: the app built as ``tracebox serve`` builds it.
WEB_WORKER = "from tracebox.app import create_app_from_env; create_app_from_env()"


ROOT = Path(__file__).resolve().parents[1]
SDK_CACHE = Path(os.environ.get("TRACEBOX_SDK_CACHE") or ROOT / ".cache" / "sdk")


def missing(message: str) -> NoReturn:
    """A prerequisite that ``make test`` installs (PostgreSQL, Chromium, an SDK) is absent:
    a failure under ``make test`` (scripts/test.sh sets TRACEBOX_REQUIRE_POSTGRES), so a
    broken install step cannot pass as skipped tests; a skip in a partial run elsewhere."""
    if os.environ.get("TRACEBOX_REQUIRE_POSTGRES"):
        pytest.fail(message)
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tracebox_env(settings: Settings, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        TRACEBOX_DATA_DIR=str(settings.data_dir),
        TRACEBOX_DATABASE_URL=settings.database_url,
        TRACEBOX_EXTERNAL_URL=settings.external_url,
        TRACEBOX_SPOOL_COMMIT_INTERVAL_MS=str(settings.spool_commit_interval_ms),
        TRACEBOX_DIGEST_POLL_INTERVAL_MS=str(settings.digest_poll_interval_ms),
        TRACEBOX_RATE_LIMIT_EVENTS_PER_MINUTE=str(settings.rate_limit_events_per_minute),
    )
    env.update(extra)
    return env


def cli(settings: Settings, *args: str) -> Any:
    """Run ``tracebox ARGS`` and parse its JSON output."""
    out = subprocess.run(
        [sys.executable, "-m", "tracebox", *args],
        env=tracebox_env(settings),
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


@dataclass
class LiveServer:
    settings: Settings
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    stopped: bool = field(default=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def dsn(self, public_key: str, project_id: int) -> str:
        return f"http://{public_key}@127.0.0.1:{self.port}/api/v4/error_tracking/collector/{project_id}"

    def create_project(self, path: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """A project with integrated error tracking active, and a client key for it."""
        project = cli(self.settings, "project", "create", path)
        key = cli(self.settings, "key", "create", path)
        return project, key

    def kill(self) -> None:
        """SIGKILL the whole server: web workers and digest, no chance to flush anything."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        self.stopped = True

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def start_server(
    settings: Settings,
    *,
    workers: int = 1,
    port: int | None = None,
    env: dict[str, str] | None = None,
    wait: bool = True,
) -> LiveServer:
    """``tracebox serve`` in its own session; ``env``: extra TRACEBOX_* variables;
    ``wait``: return once ``/-/health`` answers 200."""
    port = port or free_port()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    log_path = settings.data_dir.parent / f"server-{port}.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tracebox",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                str(workers),
            ],
            env=tracebox_env(settings, **(env or {})),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # so kill() and stop() reach every child process
        )
    server = LiveServer(settings, port, process, log_path)
    if wait:
        wait_healthy(server)
    return server


def wait_healthy(server: LiveServer) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"server exited early:\n{server.log()}")
        try:
            if httpx.get(f"{server.url}/-/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    server.stop()
    raise RuntimeError(f"server did not become healthy:\n{server.log()}")


def wait_for(condition: Any, *, timeout: float = 20.0, interval: float = 0.05) -> Any:
    """Poll ``condition()`` until it returns a truthy value; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s (last: {value!r})")
        time.sleep(interval)


GATE_TIMEOUT = 60.0  # the longest an fsync is held: a test that fails first does not hang


class FsyncGate:
    """``os.fsync`` held at its start until ``release()``: what a request or an append
    holds while the disk stalls. Install with ``monkeypatch.setattr(os, "fsync", gate)``;
    ``entered`` is set when a thread reaches it."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self._released = threading.Event()
        self._fsync = os.fsync

    def __call__(self, fd: int) -> None:
        self.entered.set()
        self._released.wait(GATE_TIMEOUT)
        self._fsync(fd)

    def release(self) -> None:
        self._released.set()


def modules_loaded(setup: str, names: tuple[str, ...], data_dir: Path | None = None) -> list[str]:
    """Which of ``names`` a new interpreter has imported once it ran ``setup`` (Python
    statements), with ``TRACEBOX_DATA_DIR`` set to ``data_dir`` if given: what a process
    of the server holds in memory before any request needs it."""
    loaded = f"[m for m in {names!r} if m in sys.modules]"
    code = f"import json, sys; {setup}; print(json.dumps({loaded}))"
    env = {**os.environ, **({"TRACEBOX_DATA_DIR": str(data_dir)} if data_dir else {})}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    found: list[str] = json.loads(out.stdout)
    return found
