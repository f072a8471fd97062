"""The digest loop: read spool batches past the stored cursors, write them, advance."""

from __future__ import annotations

import logging
import threading
from collections import Counter
from dataclasses import dataclass

from sqlalchemy import Connection
from sqlalchemy.exc import SQLAlchemyError

from tracebox.config import Settings
from tracebox.digest import sdkdata
from tracebox.digest.config import ConfigCache
from tracebox.digest.prepare import PreparedBatch, Preparer, project_ids, read_records
from tracebox.logcondition import LoggedCondition, first_line
from tracebox.metrics import Metrics
from tracebox.spool import Batch, SpoolReader
from tracebox.store import Database
from tracebox.store import digest as store_digest
from tracebox.store.error_hashes import ErrorIdCache
from tracebox.symbolication import MapCache, StoreArtifacts, Symbolicator

log = logging.getLogger("tracebox.digest")
DEFAULT_SYMBOLICATION_CACHE_BYTES = Settings.model_fields["symbolication_cache_bytes"].default


@dataclass
class DigestStats:
    batches: int = 0
    records: int = 0
    events_inserted: int = 0
    events_duplicate: int = 0
    last_batch_size: int = 0
    pending_bytes: int = 0


class DigestWorker:
    """Single-threaded consumer of one node's spool. Exactly-once per record: the batch's
    rows and the new cursors are committed in the same transaction."""

    def __init__(
        self,
        db: Database,
        reader: SpoolReader,
        *,
        batch_size: int,
        metrics: Metrics | None = None,
        symbolication_cache_bytes: int = DEFAULT_SYMBOLICATION_CACHE_BYTES,
        sdk_limits: sdkdata.SdkLimits | None = None,
    ) -> None:
        self.db = db
        self.sdk_limits = sdk_limits or sdkdata.SdkLimits()
        self.metrics = metrics
        self.reader = reader
        self.batch_size = batch_size
        self.symbolicator = Symbolicator(StoreArtifacts(db), MapCache(symbolication_cache_bytes))
        self.preparer = Preparer(symbolicator=self.symbolicator)
        self.configs = ConfigCache()
        self.error_ids = ErrorIdCache()
        self.stats = DigestStats()

    def run_once(self) -> int:
        """Digest one batch; return how many records it held (0 = spool drained)."""
        with self.db.read() as conn:
            positions = store_digest.load_cursors(conn)
        batch = self.reader.read(positions, self.batch_size)
        if not batch.records:
            self._release(positions)
            self.stats.pending_bytes = 0
            if self.metrics:
                self.metrics.digest_lag_bytes.set(0)
            return 0
        try:
            result = self._commit(batch)
        except SQLAlchemyError:
            if not self.db.ping():
                raise  # the database is down: keep the spool, retry later
            # The database answers but refuses this batch: one record is poison (say, its
            # project was deleted after ingestion). Find it rather than stall every project.
            log.exception("digest batch refused; digesting its records one by one")
            result = self._commit_singly(positions, len(batch.records))
        self._release(batch.positions)
        self.stats.batches += 1
        self.stats.records += len(batch.records)
        self.stats.last_batch_size = len(batch.records)
        self.stats.events_inserted += result.events_inserted
        self.stats.events_duplicate += result.events_duplicate
        self.stats.pending_bytes = self.reader.pending_bytes(batch.positions)
        if self.metrics:
            self.metrics.digested(len(batch.records), result, self.stats.pending_bytes)
        return len(batch.records)

    def _commit(self, batch: Batch) -> store_digest.BatchResult:
        """Write a batch and its new spool positions in one transaction."""
        records = read_records(batch.records)
        with self.db.read() as conn:
            configs = self.configs.load(conn, project_ids(records))
        prepared = self.preparer.prepare(records, configs)
        with self.db.write() as conn:
            result = self._write(conn, prepared)
            store_digest.save_cursors(conn, batch.positions)
        return result

    def _commit_singly(self, positions: dict[str, int], count: int) -> store_digest.BatchResult:
        """Digest ``count`` records one per transaction; set aside those the database refuses."""
        total = store_digest.BatchResult()
        for _ in range(count):
            one = self.reader.read(positions, 1)
            if not one.records:
                break
            try:
                result = self._commit(one)
                total.events_inserted += result.events_inserted
                total.events_duplicate += result.events_duplicate
            except SQLAlchemyError:
                if not self.db.ping():
                    raise
                log.exception("dropping a spool record the database refuses")
                self._set_aside(one)
            positions = {**positions, **one.positions}
        return total

    def _set_aside(self, one: Batch) -> None:
        """Skip a refused record, counted as dropped ``digest_refused`` where its project exists."""
        project_id = self.preparer.project_of(one.records[0])
        with self.db.write() as conn:
            if project_id is not None and store_digest.project_exists(conn, project_id):
                store_digest.add_dropped(conn, {(project_id, "digest_refused"): 1})
            store_digest.save_cursors(conn, one.positions)

    def _write(self, conn: Connection, prepared: PreparedBatch) -> store_digest.BatchResult:
        result = store_digest.write_events(conn, prepared.events, self.error_ids)
        for project_id, updates in prepared.sessions.items():
            store_digest.write_sessions(conn, project_id, updates)
        for project_id, aggregates in prepared.aggregates.items():
            store_digest.write_session_aggregates(conn, project_id, aggregates)
        dropped = sdkdata.write(conn, prepared.sdk, self.sdk_limits)
        store_digest.add_dropped(conn, Counter(prepared.dropped) + Counter(dropped))
        if prepared.invalid:
            log.warning("spool records set aside: %s", dict(prepared.invalid))
            result.invalid.update(prepared.invalid)
        return result

    def _release(self, positions: dict[str, int]) -> None:
        deleted = self.reader.release(positions)
        if deleted:
            with self.db.write() as conn:
                store_digest.forget_cursors(conn, deleted)

    def drain(self) -> int:
        """Digest until the spool is empty; return the records digested."""
        total = 0
        while n := self.run_once():
            total += n
        return total

    def run_forever(
        self, stop: threading.Event, *, poll_interval: float, reminder_seconds: float = 60.0
    ) -> None:
        """Digest until ``stop`` is set. A failure keeps the spool and is retried after a
        pause; it is logged when it starts, reminded while it lasts, and logged when over."""
        database_down = LoggedCondition(
            log,
            "database unavailable; the digest keeps the spool",
            reminder_seconds=reminder_seconds,
        )
        failing = LoggedCondition(log, "digest batch failed", reminder_seconds=reminder_seconds)
        while not stop.is_set():
            try:
                digested = self.run_once()
            except Exception as e:
                if self.db.ping():
                    failing.occurred(f"retrying ({type(e).__name__})", traceback=True)
                else:
                    database_down.occurred(f"retrying ({first_line(e)})")
                stop.wait(min(5.0, poll_interval * 50))
                continue
            database_down.cleared()
            failing.cleared()
            if digested == 0:
                stop.wait(poll_interval)
