"""``tracebox serve``: the web workers and the background process, supervised together.

The main process holds the data directory's lock, keeps the background process (the
digest and every other registered unit, ``supervisor``) running, and serves HTTP. On
SIGTERM or SIGINT, in-flight requests finish and the background units finish their
step, in parallel; the main process exits 0 once every child is gone, within
``TRACEBOX_SHUTDOWN_TIMEOUT_SECONDS``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import subprocess
import sys

from tracebox import datadir
from tracebox.accounts.bootstrap import INITIAL_PASSWORD_FILE, ensure_root
from tracebox.config import Settings
from tracebox.store import Database
from tracebox.supervisor import heartbeat
from tracebox.supervisor.process import ProcessSupervisor
from tracebox.supervisor.web import run_web

log = logging.getLogger("tracebox.server")


def export_settings(settings: Settings) -> None:
    """Put every setting in the environment, so worker processes build the same Settings."""
    for name, value in dataclasses.asdict(settings).items():
        os.environ[f"TRACEBOX_{name.upper()}"] = str(value)


def migrate(settings: Settings) -> None:
    """Apply migrations in a child process (``tracebox migrate``, settings from the
    environment): alembic and what it imports (mako, pygments, every SQLAlchemy dialect,
    ~12 MB resident) would stay in serve's memory for good (issue 10: 250 MB in all)."""
    done = subprocess.run(
        [sys.executable, "-m", "tracebox", "migrate"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        raise SystemExit(f"tracebox: migrations failed (exit code {done.returncode}), see above")


def prepare_metrics_dir(settings: Settings) -> None:
    """Prometheus multiprocess mode: every process writes its values under the data dir."""
    path = settings.data_dir / "metrics"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path.resolve())


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
    try:
        datadir.node_id(settings.data_dir)  # created here, under the lock, on first start
        settings.spool_dir.mkdir(parents=True, exist_ok=True)
        export_settings(settings)  # first: the migrating child reads them too
        migrate(settings)
        db = Database(settings.resolved_database_url())
        announce_root_password(settings, db)
        db.dispose()
        prepare_metrics_dir(settings)
        heartbeat.clear(settings.data_dir)
        background = ProcessSupervisor(settings)
        background.start()
        log.info("tracebox listening on http://%s:%d", settings.host, settings.port)
        try:
            run_web(settings, on_stop=background.begin_stop)
        finally:
            background.stop()
        log.info("tracebox stopped")
    finally:
        held.release()
