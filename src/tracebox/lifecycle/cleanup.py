"""The cleanup loop: one supervised unit that keeps storage bounded.

Every ``cleanup_interval_seconds`` a pass runs retention (age, then count) for every
project, the disk budget, trains due zstd dictionaries, forgets old usage counters and
gives freed pages back to the file system. In between it polls for deletion requests
every few seconds. Each write is a short transaction (``batches.Batches``); the loop
checks ``stop`` between them, so SIGTERM ends it within one batch.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tracebox.config import MIB, Settings
from tracebox.ingest.counters import SharedCounters
from tracebox.lifecycle import compression
from tracebox.lifecycle.batches import Batches, LockStats
from tracebox.lifecycle.deletion import Worker
from tracebox.lifecycle.kinds import PRUNABLE_KINDS, Prunable
from tracebox.lifecycle.removal import Removal, unlink
from tracebox.lifecycle.retention import Policy, Pruner, policies
from tracebox.logs import LoggedCondition, first_line
from tracebox.metrics import Metrics
from tracebox.spool import progress
from tracebox.store import Database, client_reports, sqlite_space, usage
from tracebox.store.usage import Outcome

log = logging.getLogger("tracebox.lifecycle")

JOB_POLL_SECONDS = 2.0  # how soon a deletion request left unfinished by its request starts
# The digest publishes its progress after every batch and every few seconds while idle:
# older than this, no digest runs on this node.
DIGEST_ALIVE_SECONDS = 30.0
FAILURE_PAUSE_SECONDS = 5.0  # pause before retrying a failed step (the digest: up to 5 s)
VACUUM_PAGES = 64  # first incremental_vacuum step (16 KiB pages); adapts like the other batches
# At most this many pages per step: moving a page in use (and rewriting the pointer to it)
# costs far more than dropping a free page at the end of the file, so a step sized on the
# cheap pages must not be huge (before: up to 16,384 pages, 256 MiB, in one transaction).
VACUUM_MAX_PAGES = 1024


@dataclass
class PassReport:
    """What one pass did (``tracebox cleanup`` prints it)."""

    started_at: float
    seconds: float = 0.0
    removed: dict[str, int] = field(default_factory=dict)  # reason -> events
    removed_bytes: int = 0  # payload bytes of the removed events and rows
    other: dict[str, int] = field(default_factory=dict)  # kind -> items
    used_bytes_before: int = 0
    used_bytes_after: int = 0
    budget_bytes: int = 0
    freed_file_bytes: int = 0  # given back to the file system
    deletions_finished: list[int] = field(default_factory=list)
    dictionaries_trained: list[int] = field(default_factory=list)
    lock: LockStats = field(default_factory=LockStats)

    def add(self, reason: str, removal: Removal) -> None:
        self.removed[reason] = self.removed.get(reason, 0) + removal.total
        self.removed_bytes += removal.bytes
        for kind, n in removal.other.items():
            self.other[kind] = self.other.get(kind, 0) + n


class CleanupLoop:
    """``run(stop)`` until ``stop`` is set, calling ``beat`` (the supervisor's "alive")
    after every batch and between the reads that find one; ``heartbeat`` is the unix
    time of the last call."""

    name = "cleanup"

    def __init__(
        self,
        db: Database,
        settings: Settings,
        *,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.time,
        kinds: tuple[Prunable, ...] = PRUNABLE_KINDS,
        counters: SharedCounters | None = None,
        beat: Callable[[], None] = lambda: None,
    ) -> None:
        self.db = db
        self.settings = settings
        self.metrics = metrics
        self.clock = clock
        self.kinds = kinds
        # This node's ingest counters, whose refusals go into the usage counters.
        self.counters = counters
        self._beat = beat
        self.heartbeat = time.time()
        self.last_report: PassReport | None = None

    def run(self, stop: threading.Event) -> None:
        """Until ``stop`` is set. A failure (the database down, a bug) is retried after
        a pause, logged when it starts, reminded while it lasts and logged when over, as
        the digest does: a database outage is an episode of a few lines, not a crash loop
        of tracebacks."""
        reminder = self.settings.log_reminder_seconds
        database_down = LoggedCondition(
            log, "database unavailable; cleanup waits", reminder_seconds=reminder
        )
        failing = LoggedCondition(log, "cleanup failed", reminder_seconds=reminder)
        next_pass = 0.0
        while not stop.is_set():
            try:
                self.flush_refusals()
                if time.monotonic() >= next_pass:
                    self.last_report = self.run_once(stop)
                    next_pass = time.monotonic() + self.settings.cleanup_interval_seconds
                else:
                    self.deletions(stop)
            except Exception as e:
                if self.db.ping():
                    failing.occurred(f"retrying ({type(e).__name__})", traceback=True)
                else:
                    database_down.occurred(f"retrying ({first_line(e)})")
                self.beat()
                stop.wait(FAILURE_PAUSE_SECONDS)
                continue
            database_down.cleared()
            failing.cleared()
            self.beat()
            stop.wait(JOB_POLL_SECONDS)

    def batches(
        self, *, initial: int = 100, maximum: int = 2000, stop: threading.Event | None = None
    ) -> Batches:
        return Batches(
            self.db,
            target_ms=self.settings.cleanup_lock_target_ms,
            initial=initial,
            maximum=maximum,
            on_lock=self._locked,
            behind=self._digest_behind if self.settings.cleanup_yield_lag_seconds else None,
            write_budget=self.settings.cleanup_write_mib_per_s * MIB,
            stop=stop,
        )

    def _digest_behind(self) -> bool:
        """This node's digest runs and is more than ``cleanup_yield_lag_seconds`` behind
        its spool. (Without a digest, say ``tracebox cleanup`` while serve is stopped,
        there is nobody to give way to.)"""
        now, spool = time.time(), self.settings.spool_dir
        state = progress.read(spool)
        if now - state.published_at > DIGEST_ALIVE_SECONDS:
            return False
        lag = progress.backlog(spool, state).lag_seconds(now)
        return lag > self.settings.cleanup_yield_lag_seconds

    def deletions(self, stop: threading.Event, batches: Batches | None = None) -> list[int]:
        worker = Worker(self.db, batches or self.batches(stop=stop), stop, kinds=self.kinds)
        return [job.id for job in worker.run_pending()]

    def flush_refusals(self) -> int:
        """Move the refusals ingestion counted on this node into ``usage_hourly``.
        Returns how many. (A crash between the two loses them: they are counts of
        requests already answered, not data.)"""
        if self.counters is None:
            return 0
        drained = self.counters.drain_refused(self.clock())
        if not drained:
            return 0
        with self.db.write() as conn:
            known = usage.existing_projects(conn, {p for p, _, _, _ in drained})
            usage.count_outcomes(
                conn,
                {
                    (p, hour, category, Outcome.REFUSED, reason): n
                    for (p, hour, category, reason), n in drained.items()
                    if p in known
                },
            )
        return sum(drained.values())

    def run_once(self, stop: threading.Event | None = None) -> PassReport:
        stop = stop or threading.Event()
        report = PassReport(started_at=self.clock())
        batches = self.batches(stop=stop)
        pruner = Pruner(self.db, batches, stop, clock=self.clock, kinds=self.kinds, beat=self.beat)
        report.used_bytes_before = pruner.used_bytes()
        report.deletions_finished = self.deletions(stop, batches)
        for project_id, policy in policies(self.db, self.settings).items():
            self._retain(pruner, project_id, policy, report)
        report.budget_bytes = self.settings.max_data_bytes
        self._record(report, "disk_budget", pruner.budget(self.settings.max_data_bytes))
        self._forget_old_usage(batches)
        if not stop.is_set():
            report.dictionaries_trained = self._train(stop)
        report.freed_file_bytes = self.give_back_space(stop, batches.stats)
        report.used_bytes_after = pruner.used_bytes()
        report.lock = batches.stats
        report.seconds = self.clock() - report.started_at
        if self.metrics:
            self.metrics.data_bytes.set(report.used_bytes_after)
            self.metrics.data_budget_bytes.set(report.budget_bytes)
        self._log(report)
        return report

    def _retain(self, pruner: Pruner, project_id: int, policy: Policy, report: PassReport) -> None:
        self._record(report, "age", pruner.by_age(project_id, policy))
        self._record(report, "count", pruner.by_count(project_id, policy))
        self.beat()

    def _record(self, report: PassReport, reason: str, removal: Removal) -> None:
        report.add(reason, removal)
        unlink(removal.files)
        if self.metrics:
            self.metrics.cleanup_removed.labels("events", reason).inc(removal.total)
            for kind, n in removal.other.items():
                self.metrics.cleanup_removed.labels(kind, reason).inc(n)

    def _forget_old_usage(self, batches: Batches) -> None:
        first_kept = int(self.clock() // 3600) - self.settings.usage_retention_days * 24
        batches.write(lambda conn: usage.forget_outcomes_before(conn, first_kept), rows=0)
        # What SDKs reported they discarded: shown beside the usage counters, kept as long.
        batches.write(lambda conn: client_reports.forget_before(conn, first_kept), rows=0)

    def _train(self, stop: threading.Event) -> list[int]:
        trained = []
        for project_id in compression.due(self.db, self.settings, self.clock()):
            if stop.is_set():
                break
            compression.train(self.db, project_id, self.settings.dictionary_bytes)
            trained.append(project_id)
            self.beat()
        return trained

    def give_back_space(self, stop: threading.Event, stats: LockStats | None = None) -> int:
        """Return free pages to the file system, a few per transaction (SQLite). Returns
        the bytes the file shrank by."""
        batches = self.batches(initial=VACUUM_PAGES, maximum=VACUUM_MAX_PAGES, stop=stop)
        if stats is not None:
            batches.stats = stats  # one account of the pass's lock times
        with self.db.read() as conn:
            before = sqlite_space.space(conn)
        space = before
        while space.free_bytes and not stop.is_set():
            pages = batches.size
            moved = batches.write(
                lambda conn, n=pages: sqlite_space.incremental_vacuum(conn, n),  # type: ignore[misc]
                rows=pages,
            )
            with self.db.read() as conn:
                space = sqlite_space.space(conn)
            if moved == 0:
                break
        return before.file_bytes - space.file_bytes

    def beat(self) -> None:
        self.heartbeat = time.time()
        self._beat()

    def _locked(self, seconds: float) -> None:
        self.beat()
        if self.metrics:
            self.metrics.cleanup_lock_seconds.observe(seconds)

    def _log(self, report: PassReport) -> None:
        removed = sum(report.removed.values())
        if removed or report.freed_file_bytes or report.deletions_finished:
            log.info(
                "cleanup: removed %d events (%s), freed %d bytes of file, longest lock %.1f ms",
                removed,
                ", ".join(f"{r} {n}" for r, n in sorted(report.removed.items()) if n),
                report.freed_file_bytes,
                report.lock.longest_ms,
            )
