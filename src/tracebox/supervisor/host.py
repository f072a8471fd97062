"""The background process: every registered unit (``supervisor.units``) as a thread.

``serve`` starts it (and restarts it when it dies, ``supervisor.process``); ``tracebox
digest`` runs it in the foreground. Each unit thread restarts its unit with backoff
when it raises. SIGTERM, or the death of ``serve``, sets the units' stop event; each
finishes its step (the digest its batch) and the process exits 0, within
``TRACEBOX_SHUTDOWN_TIMEOUT_SECONDS``.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import threading
import time
from types import FrameType

from tracebox import datadir, logs
from tracebox.config import Settings
from tracebox.logs import first_line
from tracebox.store import Database
from tracebox.supervisor.backoff import Backoff
from tracebox.supervisor.heartbeat import Heartbeat
from tracebox.supervisor.units import UNITS, Unit, UnitContext

log = logging.getLogger("tracebox.supervisor")

LOCK_FILE = "background.lock"  # one background process per data directory
LOCK_WAIT_S = 10.0  # a restarted process waits this long for a dying one to let go
PARENT_CHECK_S = 1.0
# Net allocations of tracked objects between two collections of the youngest generation
# (Python's default: 700). The digest holds a transaction's rows until it writes them:
# thousands of objects per part (the prepare process's answer, unpickled). With 700 it
# collected ~800 times per 30,000 events, 0.17-0.24 s, ~3% of its time; with 10,000,
# 8-9 times (gc.callbacks, bench/digest_bench.py; docs/performance.md, "The prepare
# process's own time, and the digest's garbage collector"). Cycles are still collected.
GC_THRESHOLD = 10_000


def run_background(settings: Settings, restarts: int = 0, *, spawned: bool = True) -> None:
    """Run every unit until SIGTERM, SIGINT (when not ``spawned``) or the parent's death.

    ``restarts``: how many times ``serve`` restarted this process (shown in heartbeats).
    ``spawned``: started by ``serve``, which decides when it stops (SIGINT is ignored:
    Ctrl-C reaches the whole process group, and ``serve`` stops us in order).
    """
    logs.configure(settings.log_level)
    gc.set_threshold(GC_THRESHOLD)
    if spawned:
        _lower_priority(settings.background_nice)
    held = _lock(settings)
    stop = threading.Event()
    _on_signals(stop, spawned=spawned)
    if spawned:
        _watch_parent(stop)
    db = Database(
        settings.resolved_database_url(),
        pool_size=len(UNITS) + 1,
        sqlite_cache_kib=settings.background_sqlite_cache_mib * 1024,
    )
    try:
        beats = {
            unit.name: Heartbeat(settings.data_dir, unit.name, restarts=restarts) for unit in UNITS
        }
        # Every unit says "running" before any starts, the first registered (the digest)
        # last: whoever sees it back after a restart sees the whole process back, even
        # when the unit threads are slow to get the CPU (TRACEBOX_BACKGROUND_NICE).
        for unit in reversed(UNITS):
            beats[unit.name].started()
        threads = [_start_unit(unit, settings, db, stop, beats[unit.name]) for unit in UNITS]
        while not stop.wait(1.0):  # short waits: signal handlers run on the main thread
            pass
        deadline = time.monotonic() + max(1.0, settings.shutdown_timeout_seconds - 1.5)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        stuck = [t.name for t in threads if t.is_alive()]
        if stuck:
            log.warning("units still busy at the shutdown deadline, abandoned: %s", stuck)
    finally:
        db.dispose()
        held.release()


def _lower_priority(nice: int) -> None:
    """Yield the CPU to serve's web workers (``TRACEBOX_BACKGROUND_NICE``). Before any unit
    thread starts: on Linux a thread inherits its creator's niceness."""
    if nice > 0:
        os.nice(nice)


def _lock(settings: Settings) -> datadir.DataDirLock:
    """Wait (briefly) for a previous background process, e.g. one orphaned by a killed
    ``serve`` that has not noticed yet, so two never digest one spool."""
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            return datadir.lock(settings.data_dir, name=LOCK_FILE)
        except datadir.DataDirInUse:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _on_signals(stop: threading.Event, *, spawned: bool) -> None:
    def on_signal(sig: int, _frame: FrameType | None) -> None:
        # Once is enough. Ignored from now on: Python restores the default action (death)
        # while the process exits, so a repeated signal (serve's and the process group's)
        # would turn a clean exit into "killed by SIGTERM".
        signal.signal(sig, signal.SIG_IGN)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, signal.SIG_IGN if spawned else on_signal)


def _watch_parent(stop: threading.Event) -> None:
    parent = os.getppid()

    def watch() -> None:
        while not stop.wait(PARENT_CHECK_S):
            if os.getppid() != parent:
                log.warning("serve (pid %d) is gone; stopping", parent)
                stop.set()

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _start_unit(
    unit: Unit, settings: Settings, db: Database, stop: threading.Event, heartbeat: Heartbeat
) -> threading.Thread:
    ctx = UnitContext(unit.name, settings, db, stop, heartbeat.beat)
    thread = threading.Thread(
        target=_supervise, args=(unit, ctx, heartbeat), name=f"unit-{unit.name}", daemon=True
    )
    thread.start()
    return thread


def _supervise(unit: Unit, ctx: UnitContext, heartbeat: Heartbeat) -> None:
    """Run the unit; when it raises (or returns before stop), restart it after a backoff."""
    backoff = Backoff()
    while not ctx.stop.is_set():
        started = time.monotonic()
        heartbeat.started()
        try:
            unit.load()(ctx)
            if ctx.stop.is_set():
                break
            raise RuntimeError("returned before it was asked to stop")
        except Exception as e:
            delay = backoff.delay(time.monotonic() - started)
            log.exception("unit %s crashed; restarting it in %.0f s", unit.name, delay)
            heartbeat.crashed(f"{type(e).__name__}: {first_line(e)}")
            ctx.stop.wait(delay)
    heartbeat.stopped()
