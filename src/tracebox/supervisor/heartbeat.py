"""Heartbeats: each background unit says it is alive in ``<data dir>/run/<unit>.json``.

Web workers read them for ``/-/health`` and ``/-/metrics``: files, so any web worker
sees every unit without asking the process that runs it, and a dead process is seen
at once (its pid is gone) or, if it hangs, once its beat is older than the timeout.
A beat is written at most once per ``BEAT_INTERVAL_S`` (replaced atomically, no fsync:
it describes the running processes, and ``serve`` clears the directory at start).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import orjson

RUN_DIR = "run"
BEAT_INTERVAL_S = 1.0


@dataclass(frozen=True)
class Beat:
    unit: str
    pid: int
    at: float  # wall time of the last beat
    started_at: float  # wall time this run of the unit started
    restarts: int  # restarts of the unit and of its process since serve started
    state: str  # "running", "restarting" (after a crash, waiting to restart) or "stopped"
    error: str  # the last crash, one line ("" if none)


def run_dir(data_dir: Path) -> Path:
    return data_dir / RUN_DIR


def clear(data_dir: Path) -> None:
    """Forget the previous run's heartbeats (``serve`` does this at start, under its lock)."""
    directory = run_dir(data_dir)
    directory.mkdir(parents=True, exist_ok=True)
    for path in directory.glob("*.json"):
        path.unlink(missing_ok=True)


class Heartbeat:
    """One unit's heartbeat file; thread-safe."""

    def __init__(self, data_dir: Path, unit: str, *, restarts: int) -> None:
        self._path = run_dir(data_dir) / f"{unit}.json"
        self._unit = unit
        self._restarts = restarts
        self._started_at = time.time()
        self._state = "running"
        self._error = ""
        self._written_at = float("-inf")
        self._lock = threading.Lock()

    def beat(self) -> None:
        """Alive; written at most once per ``BEAT_INTERVAL_S``."""
        if time.monotonic() - self._written_at >= BEAT_INTERVAL_S:
            self._write()

    def started(self) -> None:
        with self._lock:
            self._state, self._started_at = "running", time.time()
        self._write()

    def crashed(self, error: str) -> None:
        with self._lock:
            self._state, self._error = "restarting", error
            self._restarts += 1
        self._write()

    def stopped(self) -> None:
        with self._lock:
            self._state = "stopped"
        self._write()

    def _write(self) -> None:
        with self._lock:
            beat = Beat(
                self._unit,
                os.getpid(),
                time.time(),
                self._started_at,
                self._restarts,
                self._state,
                self._error,
            )
            self._written_at = time.monotonic()
            self._path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self._path.with_suffix(".new")
            tmp.write_bytes(orjson.dumps(asdict(beat)))
            os.replace(tmp, self._path)


def read(data_dir: Path, unit: str) -> Beat | None:
    try:
        return Beat(**orjson.loads((run_dir(data_dir) / f"{unit}.json").read_bytes()))
    except (OSError, ValueError, TypeError):
        return None


def is_alive(beat: Beat | None, *, timeout: float, now: float) -> bool:
    """Running, beating within ``timeout`` seconds, and its process exists."""
    if beat is None or beat.state != "running" or now - beat.at > timeout:
        return False
    try:
        os.kill(beat.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True
