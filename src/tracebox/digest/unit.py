"""The digest as a background unit (``supervisor.units``)."""

from __future__ import annotations

from tracebox import datadir
from tracebox.alerts import AlertPolicy
from tracebox.digest.sdkdata import SdkLimits
from tracebox.digest.worker import DigestWorker
from tracebox.metrics import Metrics
from tracebox.spool import SpoolReader
from tracebox.supervisor.units import UnitContext


def run_unit(ctx: UnitContext) -> None:
    settings = ctx.settings
    worker = DigestWorker(
        ctx.db,
        SpoolReader(settings.spool_dir),
        batch_size=settings.digest_batch_size,
        batch_bytes=settings.digest_batch_bytes,
        node=datadir.node_id(settings.data_dir),
        metrics=Metrics(),
        symbolication_cache_bytes=settings.symbolication_cache_bytes,
        alert_policy=AlertPolicy.from_settings(settings),
        sdk_limits=SdkLimits.from_settings(settings),
    )
    worker.run_forever(
        ctx.stop,
        poll_interval=settings.digest_poll_interval_ms / 1000,
        reminder_seconds=settings.log_reminder_seconds,
        beat=ctx.beat,
    )
