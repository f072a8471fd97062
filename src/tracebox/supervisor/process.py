"""``serve``'s side: keep the background process running, and stop it in time.

A thread of the main process starts the background process, waits for it to end
(reaping it at once: no zombie), logs how it ended, and starts it again after a backoff
unless ``serve`` is stopping. ``begin_stop`` (from the signal handler) sends it SIGTERM
at once, so it finishes its step while the web workers drain their requests; ``stop``
waits until the shutdown deadline, then kills what is left.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import subprocess
import sys
import threading
import time

from tracebox.config import Settings
from tracebox.supervisor.backoff import Backoff

log = logging.getLogger("tracebox.supervisor")

KILL_MARGIN_S = 0.5  # kill this long before the deadline, so serve itself exits within it
# The background process (``supervisor.__main__``): a plain child, not multiprocessing's
# spawn, which would add a resource tracker process (~13 MB of the 250 MB budget).
COMMAND = (sys.executable, "-m", "tracebox.supervisor")


class ProcessSupervisor:
    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._lock = threading.RLock()  # RLock: begin_stop may run in a signal handler
        self._stopping = threading.Event()
        self._stop_requested_at: float | None = None
        self._process: subprocess.Popen[bytes] | None = None  # running, not yet asked to stop
        self._last: subprocess.Popen[bytes] | None = None
        self._thread = threading.Thread(target=self._run, name="supervisor", daemon=True)
        self.restarts = 0

    def start(self) -> None:
        self._thread.start()

    def begin_stop(self) -> None:
        """Ask the background process to stop (SIGTERM); safe in a signal handler."""
        with self._lock:
            if self._stop_requested_at is None:
                self._stop_requested_at = time.monotonic()
            self._stopping.set()
            process, self._process = self._process, None  # signalled once
        if process is not None and process.returncode is None:
            process.terminate()  # SIGTERM (not sent if it has been reaped meanwhile)

    def stop(self) -> None:
        """Stop the background process: SIGTERM, then SIGKILL at the shutdown deadline."""
        self.begin_stop()
        assert self._stop_requested_at is not None
        deadline = self._stop_requested_at + self._settings.shutdown_timeout_seconds
        self._thread.join(max(0.0, deadline - KILL_MARGIN_S - time.monotonic()))
        process = self._last
        if process is not None and process.returncode is None:
            log.warning("background process (pid %s) did not stop in time; killing it", process.pid)
            process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(5)
        self._thread.join(5)

    def _run(self) -> None:
        backoff = Backoff()
        while True:
            with self._lock:
                if self._stopping.is_set():
                    return
                # The settings reach it through the environment (server.export_settings).
                process = subprocess.Popen(
                    [*COMMAND, "--restarts", str(self.restarts)], stdin=subprocess.DEVNULL
                )
                self._process = self._last = process
            started = time.monotonic()
            log.info("background process started (pid %s)", process.pid)
            process.wait()  # reaps it
            if self._stopping.is_set():
                log.info("background process stopped (%s)", _how(process.returncode))
                return
            delay = backoff.delay(time.monotonic() - started)
            log.error(
                "background process (pid %s) %s; restarting it in %.0f s",
                process.pid,
                _how(process.returncode),
                delay,
            )
            if self._stopping.wait(delay):
                return
            self.restarts += 1


def _how(exitcode: int | None) -> str:
    if exitcode is None:
        return "is still running"
    if exitcode < 0:
        return f"was killed by {signal.Signals(-exitcode).name}"
    return f"exited with code {exitcode}"
