"""The digest as a background unit (``supervisor.units``)."""

from __future__ import annotations

from tracebox import datadir
from tracebox.alerts import AlertPolicy
from tracebox.digest.sdkstore import SdkLimits
from tracebox.digest.worker import DigestWorker
from tracebox.metrics import Metrics
from tracebox.spool import SpoolReader
from tracebox.store import Database
from tracebox.supervisor.units import UnitContext


def run_unit(ctx: UnitContext) -> None:
    settings = ctx.settings
    # A pool of its own: on SQLite each connection keeps a page cache, and in the pool the
    # other units share, the digest's hot pages end up cached in several connections
    # (measured: the background process peaked ~10 MB higher; issue 10's 250 MB).
    db = Database(
        settings.resolved_database_url(),
        pool_size=2,
        sqlite_cache_kib=settings.background_sqlite_cache_mib * 1024,
    )
    worker = DigestWorker(
        db,
        SpoolReader(settings.spool_dir),
        batch_size=settings.digest_batch_size,
        batch_bytes=settings.digest_batch_bytes,
        node=datadir.node_id(settings.data_dir),
        metrics=Metrics(),
        symbolication_cache_bytes=settings.symbolication_cache_bytes,
        alert_policy=AlertPolicy.from_settings(settings),
        sdk_limits=SdkLimits.from_settings(settings),
        prepare_process=settings.digest_prepare_process,
        log_level=settings.log_level,
    )
    try:
        worker.run_forever(
            ctx.stop,
            poll_interval=settings.digest_poll_interval_ms / 1000,
            batch_interval=settings.digest_batch_interval_ms / 1000,
            reminder_seconds=settings.log_reminder_seconds,
            beat=ctx.beat,
        )
    finally:
        worker.close()
        db.dispose()
