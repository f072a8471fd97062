"""Prometheus metrics shared by the web workers and the digest process.

With several processes, ``tracebox serve`` sets ``PROMETHEUS_MULTIPROC_DIR`` before any
worker starts, and ``/-/metrics`` aggregates every process's values.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

from tracebox.store.digest import BatchResult

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
BATCH_BUCKETS = (1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.items_accepted = Counter(
            "tracebox_items_accepted",
            "Items accepted and spooled",
            ["endpoint", "type"],
            registry=r,
        )
        self.items_dropped = Counter(
            "tracebox_items_dropped", "Items accepted but not stored", ["type"], registry=r
        )
        self.requests_rejected = Counter(
            "tracebox_requests_rejected",
            "Ingest requests refused",
            ["endpoint", "reason"],
            registry=r,
        )
        self.request_latency = Histogram(
            "tracebox_ingest_request_seconds",
            "Ingest request latency",
            ["endpoint"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.digest_batch_size = Histogram(
            "tracebox_digest_batch_records",
            "Records per digest batch",
            buckets=BATCH_BUCKETS,
            registry=r,
        )
        self.digest_events = Counter(
            "tracebox_digest_events", "Events digested", ["result"], registry=r
        )
        self.digest_records_invalid = Counter(
            "tracebox_digest_records_invalid",
            "Spool records set aside by the digest (counted per project in dropped items)",
            ["reason"],
            registry=r,
        )
        self._node_gauges(r)
        # The children every accepted request updates, by endpoint: ``labels()`` takes a
        # lock and builds its key on each call, ~3 us of each request (issue 10).
        self._events_accepted: dict[str, Counter] = {}
        self._latency: dict[str, Histogram] = {}

    def _node_gauges(self, r: CollectorRegistry) -> None:
        """Set by the web worker serving /-/metrics, from the spool and the heartbeats
        (``tracebox.health``), so they stay true when the digest is dead or stuck."""
        self.digest_lag_bytes = Gauge(
            "tracebox_digest_lag_bytes",
            "Spool bytes not yet digested",
            multiprocess_mode="mostrecent",
            registry=r,
        )
        self.digest_lag_seconds = Gauge(
            "tracebox_digest_lag_seconds",
            "Age of the oldest undigested spool record (an upper bound)",
            multiprocess_mode="mostrecent",
            registry=r,
        )
        self.spool_disk_bytes = Gauge(
            "tracebox_spool_disk_bytes",
            "Size of the spool's segment files, digested or not",
            multiprocess_mode="mostrecent",
            registry=r,
        )
        self.unit_up = Gauge(
            "tracebox_unit_up",
            "1 when the background unit is alive",
            ["unit"],
            multiprocess_mode="mostrecent",
            registry=r,
        )
        self.unit_restarts = Gauge(
            "tracebox_unit_restarts",
            "Restarts of the background unit and its process since serve started",
            ["unit"],
            multiprocess_mode="mostrecent",
            registry=r,
        )
        # --- lifecycle: retention, disk budget, deletions (tracebox.lifecycle) ----------
        self.cleanup_removed = Counter(
            "tracebox_cleanup_removed",
            "Items removed by retention, the disk budget and deletion requests",
            ["kind", "reason"],
            registry=r,
        )
        self.cleanup_lock_seconds = Histogram(
            "tracebox_cleanup_lock_seconds",
            "How long each cleanup write transaction held the database's write lock",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.data_bytes = Gauge(
            "tracebox_data_bytes",
            "Bytes the data uses (SQLite: database pages in use; PostgreSQL: stored bytes)",
            multiprocess_mode="livemax",
            registry=r,
        )
        self.data_budget_bytes = Gauge(
            "tracebox_data_budget_bytes",
            "The instance's disk budget (TRACEBOX_MAX_DATA_BYTES; 0: none)",
            multiprocess_mode="livemax",
            registry=r,
        )

    # --- ingest --------------------------------------------------------------------------
    def accepted(self, endpoint: str, events: int, dropped: Mapping[str, int]) -> None:
        if events:
            child = self._events_accepted.get(endpoint)
            if child is None:
                child = self.items_accepted.labels(endpoint, "event")
                self._events_accepted[endpoint] = child
            child.inc(events)
        for item_type, n in dropped.items():
            self.items_dropped.labels(item_type).inc(n)

    def rejected(self, endpoint: str, reason: str) -> None:
        self.requests_rejected.labels(endpoint, reason).inc()

    def latency(self, endpoint: str, seconds: float) -> None:
        child = self._latency.get(endpoint)
        if child is None:
            child = self._latency[endpoint] = self.request_latency.labels(endpoint)
        child.observe(seconds)

    # --- digest ----------------------------------------------------------------------------
    def digested(self, records: int, result: BatchResult) -> None:
        self.digest_batch_size.observe(records)
        self.digest_events.labels("inserted").inc(result.events_inserted)
        self.digest_events.labels("duplicate").inc(result.events_duplicate)
        for reason, n in result.invalid.items():
            self.digest_records_invalid.labels(reason).inc(n)

    # --- exposition ------------------------------------------------------------------------
    def render(self) -> bytes:
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
            return bytes(generate_latest(registry))
        return bytes(generate_latest(self.registry))
