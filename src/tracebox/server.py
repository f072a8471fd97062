"""``tracebox serve``: web workers (uvicorn) and the digest worker, started and stopped together."""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import signal
import threading
from types import FrameType

import uvicorn

from tracebox import datadir
from tracebox.accounts.bootstrap import INITIAL_PASSWORD_FILE, ensure_root
from tracebox.config import Settings
from tracebox.store import Database

log = logging.getLogger("tracebox.server")


def export_settings(settings: Settings) -> None:
    """Put every setting in the environment, so worker processes build the same Settings."""
    for name, value in settings.model_dump().items():
        os.environ[f"TRACEBOX_{name.upper()}"] = str(value)


def prepare_metrics_dir(settings: Settings) -> None:
    """Prometheus multiprocess mode: every process writes its values under the data dir."""
    path = settings.data_dir / "metrics"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path.resolve())


def run_digest(settings: Settings, stop: threading.Event | None = None) -> None:
    """Run the digest loop until ``stop`` is set, SIGTERM arrives, or the parent dies."""
    stop = stop or threading.Event()
    parent = os.getppid()

    def on_signal(_sig: int, _frame: FrameType | None) -> None:
        stop.set()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop

    def watch_parent() -> None:
        while not stop.wait(1.0):
            if os.getppid() != parent:
                stop.set()

    threading.Thread(target=watch_parent, daemon=True).start()
    # Imported here, not at the top: prometheus_client picks its multiprocess mode at
    # import time, and serve() sets PROMETHEUS_MULTIPROC_DIR first.
    from tracebox.digest.sdkdata import SdkLimits
    from tracebox.digest.worker import DigestWorker
    from tracebox.metrics import Metrics
    from tracebox.spool import SpoolReader

    db = Database(settings.resolved_database_url(), pool_size=2)
    worker = DigestWorker(
        db,
        SpoolReader(settings.spool_dir),
        batch_size=settings.digest_batch_size,
        metrics=Metrics(),
        symbolication_cache_bytes=settings.symbolication_cache_bytes,
        sdk_limits=SdkLimits.from_settings(settings),
    )
    try:
        worker.run_forever(
            stop,
            poll_interval=settings.digest_poll_interval_ms / 1000,
            reminder_seconds=settings.log_reminder_seconds,
        )
    finally:
        db.dispose()


def announce_root_password(settings: Settings, db: Database) -> None:
    """First start: create the admin ``root``; print a generated password once."""
    password = ensure_root(db, settings.data_dir, settings.root_password)
    if password is not None:
        path = settings.data_dir / INITIAL_PASSWORD_FILE
        print(
            f"Created the admin user root with password: {password}\n"
            f"(also written to {path}; change it, then delete that file)",
            flush=True,
        )


def serve(settings: Settings) -> None:
    """Run until SIGTERM or SIGINT. Raises ``DataDirInUse`` before touching anything when
    another instance holds the data directory."""
    held = datadir.lock(settings.data_dir)
    settings.spool_dir.mkdir(parents=True, exist_ok=True)
    db = Database(settings.resolved_database_url())
    db.migrate()
    announce_root_password(settings, db)
    db.dispose()
    export_settings(settings)
    prepare_metrics_dir(settings)
    ctx = multiprocessing.get_context("spawn")
    digest = ctx.Process(target=run_digest, args=(settings,), name="tracebox-digest")
    digest.start()
    log.info("tracebox listening on http://%s:%d", settings.host, settings.port)
    try:
        uvicorn.run(
            "tracebox.app:create_app_from_env",
            factory=True,
            host=settings.host,
            port=settings.port,
            workers=settings.workers,
            log_level=settings.log_level,
            access_log=False,
            loop="uvloop",
            http="httptools",
        )
    finally:
        digest.terminate()
        digest.join(timeout=30)
        held.release()
