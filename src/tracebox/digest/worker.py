"""The digest loop: read spool batches past the stored cursors, write them, advance."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from sqlalchemy import Connection
from sqlalchemy.exc import SQLAlchemyError

from tracebox import alerts
from tracebox.alerts import AlertPolicy
from tracebox.alerts.digest_input import alert_batch
from tracebox.config import Settings
from tracebox.digest import sdkstore
from tracebox.digest.config import ConfigCache
from tracebox.digest.prepare import (
    PreparedBatch,
    Preparer,
    ProjectConfig,
    prepare_in_parts,
    project_ids,
)
from tracebox.digest.prepare_process import ChildGone, PrepareProcess
from tracebox.logs import LoggedCondition, first_line
from tracebox.metrics import Metrics
from tracebox.spool import Batch, SpoolReader, SpoolRecord, progress
from tracebox.store import Database, churn, cursors
from tracebox.store import artifacts as store_artifacts
from tracebox.store import digest as store_digest
from tracebox.store.error_hashes import ErrorIdCache
from tracebox.symbolication import MapCache, StoreArtifacts, Symbolicator
from tracebox.tracking import notices

log = logging.getLogger("tracebox.digest")
DEFAULT_SYMBOLICATION_CACHE_BYTES = Settings.symbolication_cache_bytes


@dataclass
class DigestStats:
    batches: int = 0  # transactions
    parts: int = 0  # ... read and prepared in this many parts (DigestWorker._commit)
    records: int = 0
    events_inserted: int = 0
    events_duplicate: int = 0
    last_batch_size: int = 0  # records of the last transaction
    last_parts: tuple[int, ...] = ()  # ... read and prepared in parts of these many


SINGLE_NODE = "local"  # the node name when none is given (one node, e.g. in tests)
# What a record is assumed to weigh before the first batch says (a large event: the
# benchmark corpus's events are 5-20 KB), so the first batch stays within the budget too.
FIRST_RECORD_BYTES_GUESS = 16 * 1024
PROGRESS_INTERVAL_S = 1.0  # publish progress at least this often while idle
# The share of a batch the digest prepares itself while its prepare process does the
# rest, until ``_Balance`` has timed a batch prepared and one written (issue 10).
HERE_SHARE = 0.2
# ... and of a batch handed when nothing else is to be done meanwhile: half each.
HALF_SHARE = 0.5
# ... and no hand-over of less than this share of a batch (``_Balance.share``).
MIN_HANDED_SHARE = 0.25
# The part read to be handed while a transaction is written is at least this many parts'
# worth of records (leaving room for one more part in its transaction): on SQLite the
# write takes about as long as preparing one part, and with one part the prepare process
# waited for it (a third of its time). A longer write gets more (``_Balance.covering``).
# Still prepared a part at a time (``prepare_in_parts``).
WRITE_PARTS = 2
# PostgreSQL: vacuum the errors table (``store.churn``) at most this often, and no more
# than this share of the time (a large table takes longer to vacuum: it is done less often).
VACUUM_INTERVAL_S = 2.0
VACUUM_SHARE = 0.05


@dataclass(frozen=True)
class _Ahead:
    """The batch after the one being written: read from that one's end before it
    committed, and handed to the prepare process, which prepares it meanwhile. Only its
    last records (``kept``, which this process prepares) are kept here; the others are
    read again should the prepare process fail. Without a prepare process: a batch read
    to join the transaction, all of it ``kept``."""

    start: dict[str, int]  # the positions it was read from: the last batch's end
    positions: dict[str, int]  # as ``Batch.positions``
    drained: list[str]
    count: int
    read_at: float
    kept: list[bytes]  # its last records, which this process prepares (``_hand``)
    ticket: int | None  # the prepare process's for the others (None: all kept)
    joins: bool  # it joins the transaction of the batch it was read after (``_commit``)

    def without(self, released: set[str]) -> _Ahead:
        """As the stored cursors are once ``released`` segments are forgotten."""
        return replace(
            self,
            start={n: p for n, p in self.start.items() if n not in released},
            positions={n: p for n, p in self.positions.items() if n not in released},
        )


@dataclass
class _Taken:
    """What one transaction takes from the spool: one part, or several read and prepared
    one after the other (``DigestWorker._commit``)."""

    positions: dict[str, int]  # as ``Batch.positions``, after its last part
    drained: list[str]
    parts: list[int]  # records per part

    @property
    def count(self) -> int:
        return sum(self.parts)

    def add(self, part: _Ahead) -> None:
        self.positions = part.positions
        self.drained += part.drained
        self.parts.append(part.count)


class _Balance:
    """How much of a batch handed to the prepare process this process prepares itself,
    so that neither waits for the other: as long as it takes the prepare process to do
    the rest, this process prepares the records it kept of the batch before (and writes,
    when it writes before it next needs the prepare process's answer), and does its other
    work: reading the spool, bookkeeping (``overhead``, measured). All is timed in wall
    seconds (the wait is wall time); the prepare process times its own preparing and
    says so with each answer. It prepares about as fast (309 against 322 us per record
    in ``bench/digest_bench.py``), but this process's figure also moves with its writes
    (0.30-0.60 ms at the end of runs): counted at it, the child got too little and sat
    blocked on its answer (docs/performance.md, "The prepare process's own time")."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self.per_record: float | None = None  # seconds to prepare a record (moving mean)
        self.child_per_record: float | None = None  # ... in the prepare process
        self.write: float | None = None  # seconds the last transaction took
        # Seconds per hand-over spent on neither preparing nor writing, between the
        # prepare process starting on a batch and this process asking for its answer
        # (moving mean): without it this process kept more than it could do while the
        # prepare process worked, which then waited.
        self.overhead = 0.0
        self._handed_at: float | None = None
        self._timed = 0.0  # seconds prepared and written since the hand-over

    def prepared(self, records: int, seconds: float) -> None:
        self.per_record = _moving(self.per_record, seconds / records)
        self._timed += seconds

    def child_prepared(self, records: int, seconds: float) -> None:
        """The prepare process's answer took it ``seconds`` for ``records``."""
        if records:
            self.child_per_record = _moving(self.child_per_record, seconds / records)

    def wrote(self, seconds: float) -> None:
        self.write = seconds
        self._timed += seconds

    def handed(self) -> None:
        """The prepare process starts on a batch (handed to it idle, or handed earlier and
        next in line once it answered): time what this process does meanwhile."""
        self._handed_at = self._clock()
        self._timed = 0.0

    def collecting(self) -> None:
        """Its answer is wanted now: what was neither preparing nor writing is overhead."""
        if self._handed_at is None:
            return
        other = max(0.0, self._clock() - self._handed_at - self._timed)
        self.overhead = _moving(self.overhead, other)
        self._handed_at = None

    def covering(self, kept: int) -> int:
        """How many records the prepare process prepares in the time this process takes
        to prepare ``kept`` records and write a transaction (0 until both are timed).
        Read and handed while a transaction is written, fewer left the prepare process
        idle: on PostgreSQL a write of ~480 events takes ~120 ms, two parts (~330
        records) ~100 ms of the child's, and it sat blocked on its answer 40% of the time
        (docs/performance.md, "A hand-over as long as the write")."""
        if self.per_record is None or self.write is None:
            return 0
        busy = kept * self.per_record + self.write + self.overhead
        return round(busy / (self.child_per_record or self.per_record))

    def share(self, count: int, kept: int, *, writes: bool) -> float:
        """The share of a batch of ``count`` records to keep here, when ``kept`` records
        are to be prepared here first (and a transaction written, if ``writes``)."""
        if self.per_record is None or self.write is None:
            return HERE_SHARE
        busy = kept * self.per_record + (self.write if writes else 0.0) + self.overhead
        child = self.child_per_record or self.per_record  # what it takes there
        share = min(1.0, max(0.0, 1 - busy / (count * child)))
        # So little to hand that the hand-over would cost about what it saves: keep it
        # all, to be prepared here while the prepare process takes the part after it.
        return 1.0 if share > 1 - MIN_HANDED_SHARE else share


def _moving(mean: float | None, value: float) -> float:
    """A moving mean that goes a fifth of the way to each new ``value``."""
    return value if mean is None else 0.8 * mean + 0.2 * value


class DigestWorker:
    """Single-threaded consumer of one node's spool. Exactly-once per record: the batch's
    rows and the new cursors are committed in the same transaction.

    ``node`` names this node's cursor rows in the database; ``serve`` and ``digest`` pass
    the data directory's node id, so nodes sharing a database never touch each other's.

    With ``prepare_process`` the batches are prepared in a child process
    (``digest.prepare_process``): while batch N is written, batch N+1 is already read
    and being prepared, when the spool holds a full one (a digest that keeps up reads
    its next batch after ``run_forever``'s batch interval instead). It is read from N's
    end positions and its own transaction advances the cursors from there, so
    exactly-once is unchanged; if N's transaction fails, N+1 is dropped and read again
    from the stored cursors.
    """

    def __init__(
        self,
        db: Database,
        reader: SpoolReader,
        *,
        batch_size: int,
        batch_bytes: int | None = None,
        node: str = SINGLE_NODE,
        metrics: Metrics | None = None,
        symbolication_cache_bytes: int = DEFAULT_SYMBOLICATION_CACHE_BYTES,
        sdk_limits: sdkstore.SdkLimits | None = None,
        alert_policy: AlertPolicy | None = None,
        prepare_process: bool = False,
        log_level: str = "INFO",
    ) -> None:
        self.db = db
        self.sdk_limits = sdk_limits or sdkstore.SdkLimits()
        self.metrics = metrics
        self.reader = reader
        self.batch_size = batch_size
        self.batch_bytes = batch_bytes
        self._record_bytes = FIRST_RECORD_BYTES_GUESS  # mean record size of the last part read
        self.node = node
        self.symbolicator = Symbolicator(StoreArtifacts(db), MapCache(symbolication_cache_bytes))
        self.preparer = Preparer(symbolicator=self.symbolicator)
        self.configs = ConfigCache()
        self.error_ids = ErrorIdCache()
        self.stats = DigestStats()
        self._tidied = False
        self._unforgotten: set[str] = set()  # deleted segments whose rows remain
        self._drained_at: dict[str, float] = {}
        self._published_at = float("-inf")
        self._vacuum_at = 0.0  # time.monotonic() when the errors table may be vacuumed again
        self.alert_policy = alert_policy or AlertPolicy()
        self.child = PrepareProcess(log_level=log_level) if prepare_process else None
        self._ahead: _Ahead | None = None
        self._balance = _Balance()
        self._caught_up = False  # the last read took every record the spool held

    def close(self) -> None:
        """Stop the prepare process, if any (the batch in hand is dropped, not lost)."""
        self._ahead = None
        if self.child is not None:
            self.child.close()

    def run_once(self) -> int:
        """Digest one batch; return how many records it held (0 = spool drained)."""
        if not self._tidied:
            self._tidy_cursors()
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            with self.db.read() as conn:
                positions = cursors.load(conn, self.node)
            read_at = time.time()
            wanted = self._batch_records()
            batch = self.reader.read(positions, wanted)
            self._caught_up = len(batch.records) < wanted
            if not batch.records:
                self._release(positions)
                self._publish(positions, batch.drained, read_at, changed=False)
                return 0
            count = len(batch.records)
            self._measure(batch.records)
        else:  # its records are with the prepare process
            positions, read_at = ahead.start, ahead.read_at
            batch = Batch([], ahead.positions, ahead.drained)
            count = ahead.count
        taken = _Taken(batch.positions, list(batch.drained), [count])
        try:
            result = self._commit(batch, taken, handed=ahead, ahead=True)
        except SQLAlchemyError:
            if not self.db.ping():
                raise  # the database is down: keep the spool, retry later
            # The database answers but refuses this batch: one record is poison (say, its
            # project was deleted after ingestion). Find it rather than stall every project.
            log.exception("digest batch refused; digesting its records one by one")
            result = self._commit_singly(positions, taken.count)
        released = self._release(taken.positions)
        if self._ahead is not None and released:
            self._ahead = self._ahead.without(released)
        self._publish(taken.positions, taken.drained, read_at, changed=True)
        self.stats.batches += 1
        self.stats.records += taken.count
        self.stats.last_batch_size = taken.count
        self.stats.parts += len(taken.parts)
        self.stats.last_parts = tuple(taken.parts)
        self.stats.events_inserted += result.events_inserted
        self.stats.events_duplicate += result.events_duplicate
        if self.metrics:
            self.metrics.digested(taken.count, result)
        self._vacuum()
        return taken.count

    def _vacuum(self) -> None:
        """Vacuum the errors table when it is time (``store.churn``). A failure is logged,
        not raised: the batch is committed, and the next round tries again."""
        now = time.monotonic()
        if now < self._vacuum_at:
            return
        try:
            churn.vacuum_churned(self.db)
        except SQLAlchemyError as e:
            log.warning("vacuum of the errors table failed: %s", first_line(e))
        took = time.monotonic() - now
        self._vacuum_at = now + max(VACUUM_INTERVAL_S, took / VACUUM_SHARE)

    def _batch_records(self) -> int:
        """Records to read for the next part: ``batch_size``, fewer when ``batch_bytes``
        would be exceeded at the last part's mean record size, decoded (a compressed
        payload counts at its decompressed size). A part's events are all parsed at
        once: the budget bounds the digest's memory (issue 10's 250 MB)."""
        if self.batch_bytes is None:
            return self.batch_size
        return max(1, min(self.batch_size, self.batch_bytes // self._record_bytes))

    def _measure(self, records: list[bytes]) -> None:
        """Size the next part on these records' mean size, decoded."""
        size = sum(map(SpoolRecord.decoded_size, records))
        self._record_bytes = max(1, size // len(records))

    def _commit(
        self,
        batch: Batch,
        taken: _Taken | None = None,
        *,
        handed: _Ahead | None = None,
        ahead: bool = False,
    ) -> store_digest.BatchResult:
        """Write a batch and its new spool positions in one transaction. ``handed``: the
        batch is with the prepare process; ``ahead``: read the next batch and hand it to
        the prepare process (if there is one) before this one is written.

        With ``ahead``, a digest that is behind takes more than one part: while the next
        part read is full (the spool holds more) and fits in ``batch_size`` records with
        the parts taken, it joins this transaction (``taken`` counts them) once prepared.
        A part's records are read and prepared together, so ``batch_bytes`` bounds each
        part; only the rows prepared from them wait for the write. Each commit rewrites
        the pages its rows touch (the tag counts' are spread over their whole table), so
        fewer, larger transactions cost less CPU and disk per event (docs/performance.md,
        "Transactions of several parts")."""
        try:
            if ahead and handed is not None:
                # The part after this one is read and handed while the child may still
                # be preparing this one (a batch handed earlier): it goes on to the next
                # as soon as it has answered, and waits for neither the read nor the
                # hand-over's lookups (docs/performance.md, "One batch deeper").
                read = self._read_next(batch, taken, len(handed.kept))
                following = self._read_ahead(batch, read, taken, len(handed.kept))
                prepared = self._collect(batch, handed)
            else:
                prepared = self._collect(batch, handed)
                read = self._read_next(batch, taken, 0) if ahead else None
                following = self._read_ahead(batch, read, taken, 0)
            while following is not None and following.joins and taken is not None:
                part, joining = Batch([], following.positions, following.drained), following
                taken.add(joining)
                read = self._read_next(part, taken, len(joining.kept))
                following = self._read_ahead(part, read, taken, len(joining.kept))
                prepared.extend(self._collect(part, joining))
            started = time.perf_counter()
            with self.db.write() as conn:
                result = self._write(conn, prepared)
                cursors.advance(
                    conn, self.node, batch.positions if taken is None else taken.positions
                )
            self._balance.wrote(time.perf_counter() - started)
        except BaseException:
            # Whatever failed (the write, or a read while the child held a batch: the
            # database went away), the child's answer is not taken: drop it, or the next
            # batch could never be handed.
            if self.child is not None:
                self.child.discard()
            raise
        self._ahead = following
        return result

    def _collect(self, batch: Batch, handed: _Ahead | None) -> PreparedBatch:
        """The batch prepared. A batch not handed yet is handed now if the prepare process
        can take it, else prepared here. Of one handed (now, or earlier: ``handed``), this
        process first prepares the last records it kept (``_hand``), then takes the
        prepare process's answer for the others: by then the prepare process has mostly
        answered, and gone on to the batch handed after it (``_commit``)."""
        if self.child is None:
            return self._prepare_here(handed.kept if handed is not None else batch.records)
        if handed is not None:
            kept, ticket = handed.kept, handed.ticket
        else:
            hand = self._hand(batch.records, HALF_SHARE)
            if hand is None:
                return self._prepare_here(batch.records)
            kept, ticket = hand
        mine = self._prepare_here(kept)
        if ticket is None:  # nothing of it was handed
            return mine
        self._balance.collecting()
        try:
            prepared = self.child.result(ticket)
            if self.child.timed is not None:
                self._balance.child_prepared(*self.child.timed)
        except ChildGone:  # logged by the child's handle: the rest prepared here instead
            records = (
                self.reader.read(handed.start, handed.count).records
                if handed is not None
                else batch.records
            )
            prepared = self._prepare_here(records[: len(records) - len(kept)])
        else:
            if self.child.pending:  # it goes on to the batch handed next, from now
                self._balance.handed()
        prepared.extend(mine)
        return prepared

    def _prepare_here(self, raw: list[bytes]) -> PreparedBatch:
        if not raw:
            return PreparedBatch()
        started = time.perf_counter()
        prepared = prepare_in_parts(self.preparer, raw, self._configs, self._batch_records())
        self._balance.prepared(len(raw), time.perf_counter() - started)
        return prepared

    def _configs(self, records: Sequence[bytes | memoryview]) -> dict[int, ProjectConfig]:
        with self.db.read() as conn:
            return self.configs.load(conn, project_ids(records))

    def _hand(self, records: list[bytes], share: float) -> tuple[list[bytes], int | None] | None:
        """Hand records to the prepare process, but for the last ``share`` of them, which
        are returned with the hand-over's ticket (None if all are kept): this process
        prepares them while it would wait anyway. None
        (nothing handed) when one of their projects has source map artifacts
        (symbolication reads the database: prepared here) or the process is not there.
        The prepare process explains the others' frames as unmapped without the database
        (``symbolication.NoArtifacts``), as this process would."""
        assert self.child is not None
        projects = project_ids(records)
        with self.db.read() as conn:
            configs = self.configs.load(conn, projects)
            if store_artifacts.projects_with_artifacts(conn, configs):
                return None
        cut = len(records) - int(len(records) * share)
        if cut == 0:  # all kept: an empty hand-over would cost a round trip for nothing
            return records, None
        idle = not self.child.pending  # else it starts on these once it has answered
        try:
            ticket = self.child.submit(records[:cut], configs, self._batch_records())
        except ChildGone:
            return None
        if idle:
            self._balance.handed()
        return records[cut:], ticket

    def _read_next(
        self, batch: Batch, taken: _Taken | None, kept: int
    ) -> tuple[Batch, float] | None:
        """The part after ``batch`` (and when it was read), to go ahead (``_read_ahead``):
        one part if it joins ``taken``, else enough for the prepare process to work on
        while this process prepares the ``kept`` records of ``batch`` it kept and writes.
        None when ``batch`` or the part read took every record the spool held: a digest
        that keeps up reads its next batch whole, after ``run_forever``'s batch interval
        (the part is read again then). Without a prepare process, only a part that can
        join ``taken`` is read."""
        if self._caught_up:
            return None
        part = wanted = self._batch_records()
        joins = taken is not None and taken.count + part <= self.batch_size
        if self.child is None and not joins:
            return None
        if not joins:  # handed while this process writes
            least = max(part, min(WRITE_PARTS * part, self.batch_size - part))
            wanted = max(least, min(self.batch_size, self._balance.covering(kept)))
        read_at = time.time()
        following = self.reader.read(batch.positions, wanted)
        self._caught_up = len(following.records) < part  # a full part is enough to go on
        if self._caught_up:
            return None
        self._measure(following.records)
        return following, read_at

    def _read_ahead(
        self,
        batch: Batch,
        read: tuple[Batch, float] | None,
        taken: _Taken | None,
        kept: int,
    ) -> _Ahead | None:
        """The part ``read`` after ``batch`` (``_read_next``), handed to the prepare process
        to be prepared while this process prepares the ``kept`` records of ``batch`` it
        kept and, unless the part joins ``taken``'s transaction (``_commit``), writes.
        None when it is to be prepared here (it is read again then). Without a prepare
        process, only a part that joins ``taken`` goes ahead (all of it prepared here)."""
        if read is None:
            return None
        following, read_at = read
        count = len(following.records)
        joins = taken is not None and taken.count + count <= self.batch_size
        hand: tuple[list[bytes], int | None] | None
        if self.child is None:
            hand = (following.records, None) if joins else None
        else:
            hand = self._hand(following.records, self._balance.share(count, kept, writes=not joins))
        if hand is None:
            return None
        mine, ticket = hand
        return _Ahead(
            start=batch.positions,
            positions=following.positions,
            drained=following.drained,
            count=count,
            read_at=read_at,
            kept=mine,
            ticket=ticket,
            joins=joins,
        )

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
        project_id = SpoolRecord.project_of(one.records[0])
        with self.db.write() as conn:
            if project_id is not None and store_digest.project_exists(conn, project_id):
                store_digest.add_dropped(conn, {(project_id, "digest_refused"): 1})
            cursors.advance(conn, self.node, one.positions)

    def _write(self, conn: Connection, prepared: PreparedBatch) -> store_digest.BatchResult:
        result = store_digest.write_events(conn, prepared.events, self.error_ids)
        for project_id, updates in prepared.sessions.items():
            store_digest.write_sessions(conn, project_id, updates)
        for project_id, aggregates in prepared.aggregates.items():
            store_digest.write_session_aggregates(conn, project_id, aggregates)
        dropped = sdkstore.write(conn, prepared.sdk, self.sdk_limits)
        store_digest.add_dropped(conn, Counter(prepared.dropped) + Counter(dropped))
        alerts.evaluate(
            conn,
            alert_batch(conn, result, prepared.sessions, prepared.aggregates),
            self.alert_policy,
        )
        unignored = result.workflow.unignored  # ignore conditions that passed (issue 15)
        if unignored:
            projects = {e: result.workflow.projects[e] for e in unignored}
            notices.unignored(conn, self.alert_policy, projects, result.by_error)
        if prepared.invalid:
            log.warning("spool records set aside: %s", dict(prepared.invalid))
            result.invalid.update(prepared.invalid)
        return result

    def _release(self, positions: dict[str, int]) -> set[str]:
        """Delete consumed segments, then their cursor rows (in this order: a row without
        its file is harmless, a file without its row would be digested again); return
        the segments deleted."""
        released = set(self.reader.release(positions))
        self._unforgotten.update(released)
        if self._unforgotten:
            with self.db.write() as conn:
                cursors.forget(conn, self.node, self._unforgotten)
            self._unforgotten.clear()
        return released

    def _publish(
        self, positions: dict[str, int], drained: list[str], read_at: float, *, changed: bool
    ) -> None:
        """Tell the web workers what is digested (``spool.progress``): after every commit,
        and at least every ``PROGRESS_INTERVAL_S`` while idle (so the lag they compute
        from it stays near zero)."""
        for name in drained:
            self._drained_at[name] = read_at
        now = time.monotonic()
        if not changed and now - self._published_at < PROGRESS_INTERVAL_S:
            return
        present = set(self.reader.segment_names())
        self._drained_at = {n: t for n, t in self._drained_at.items() if n in present}
        mine = {n: p for n, p in positions.items() if n in present}
        progress.publish(self.reader.directory, mine, self._drained_at)
        self._published_at = now

    def _tidy_cursors(self) -> None:
        """Once per start: adopt this spool's rows from before cursors were per node, and
        drop rows of segments deleted by a digest that died before forgetting them."""
        with self.db.write() as conn:
            cursors.adopt_legacy(conn, self.node, self.reader.segment_names())
            rows = cursors.load(conn, self.node)
            cursors.forget(conn, self.node, set(rows) - set(self.reader.segment_names()))
        self._tidied = True

    def drain(self) -> int:
        """Digest until the spool is empty; return the records digested."""
        total = 0
        while n := self.run_once():
            total += n
        return total

    def run_forever(
        self,
        stop: threading.Event,
        *,
        poll_interval: float,
        batch_interval: float = 0.0,
        reminder_seconds: float = 60.0,
        beat: Callable[[], None] = lambda: None,
    ) -> None:
        """Digest until ``stop`` is set, finishing the batch in hand. A failure keeps the
        spool and is retried after a pause; it is logged when it starts, reminded while it
        lasts, and logged when over. ``beat`` is called every round (the heartbeat).

        An empty spool is read again every ``poll_interval`` seconds. While the digest
        keeps up (a batch took every record the spool held), it starts a batch at most
        every ``batch_interval`` seconds: what arrives meanwhile waits for the next one.
        Batches then gather the events of that interval rather than the few that came
        during the last write, and every transaction costs its commit and the pages it
        rewrites (docs/performance.md, "A digest that keeps up waits for a batch")."""
        database_down = LoggedCondition(
            log,
            "database unavailable; the digest keeps the spool",
            reminder_seconds=reminder_seconds,
        )
        failing = LoggedCondition(log, "digest batch failed", reminder_seconds=reminder_seconds)
        while not stop.is_set():
            beat()
            started = time.monotonic()
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
            elif self._caught_up:
                stop.wait(max(0.0, batch_interval - (time.monotonic() - started)))
