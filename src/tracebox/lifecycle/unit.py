"""The cleanup loop as a unit of ``tracebox serve``'s supervisor (one line in its
registry): retention, the disk budget, deletions, dictionaries, space given back, and
this node's ingest refusal counts moved into the usage view."""

from __future__ import annotations

import os

from tracebox.ingest.counters import SharedCounters
from tracebox.lifecycle.cleanup import CleanupLoop
from tracebox.supervisor.units import UnitContext


def run_unit(ctx: UnitContext) -> None:
    """Run the cleanup loop until ``ctx.stop`` is set (SIGTERM): every step is one short
    transaction, so it returns within one batch."""
    # Imported here: prometheus_client picks its multiprocess mode at import time, and
    # serve sets PROMETHEUS_MULTIPROC_DIR before starting the units' process.
    from tracebox.metrics import Metrics

    counters = SharedCounters.in_data_dir(ctx.settings.data_dir)
    metrics = Metrics() if os.environ.get("PROMETHEUS_MULTIPROC_DIR") else None
    try:
        CleanupLoop(ctx.db, ctx.settings, counters=counters, beat=ctx.beat, metrics=metrics).run(
            ctx.stop
        )
    finally:
        counters.close()
