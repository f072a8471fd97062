"""The digest with its prepare process (``digest.prepare_process``): batches prepared in a
child while the last one is written, stored exactly as without it, exactly once, and
prepared in-process whenever the child cannot."""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import pickle
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
import sqlalchemy as sa

from tests.digest.test_worker import event_record, refuse_event, spool, stored_ids
from tests.helpers import modules_loaded
from tracebox.config import Settings
from tracebox.digest.prepare import (
    PreparedBatch,
    Preparer,
    ProjectConfig,
    prepare_in_parts,
    read_records,
)
from tracebox.digest.prepare_process import (
    PIPE_BYTES,
    ChildGone,
    PrepareProcess,
    _compact,
    _expanded,
    _message,
    _receive,
    _send,
    _write_all,
)
from tracebox.digest.worker import HERE_SHARE, MIN_HANDED_SHARE, DigestWorker, _Balance
from tracebox.spool import RecordKind, SpoolReader, SpoolRecord
from tracebox.store import Database, artifacts, payloads, projects
from tracebox.store.tables import errors, events
from tracebox.symbolication import MapCache, StoreArtifacts, Symbolicator

EVENTS = 25


def fill(settings: Settings, db: Database, count: int = EVENTS) -> int:
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
    spool(settings, [event_record(project.id, n) for n in range(count)])
    return project.id


def worker(
    settings: Settings,
    db: Database,
    *,
    prepare_process: bool = False,
    parts: bool = False,
    batch_size: int = 10,
    covering: int = 0,
) -> DigestWorker:
    """Transactions of 5 records; with ``parts``, of up to ``batch_size``, read in parts
    of about 5 (the memory budget, ``batch_bytes``), several to a transaction while behind.
    ``covering``: what ``_Balance.covering`` says, the records the prepare process can
    prepare while the digest writes. In service it is timed; here it is set, or the
    transactions would depend on this machine's speed (a test's write of a few records
    takes as long as preparing dozens)."""
    reader = SpoolReader(settings.spool_dir)
    if parts:
        # Five and a half records: their sizes differ by a few bytes (the time each was
        # received, written with more or fewer digits), and with exactly five a part of 4
        # now and then made the transactions differ from run to run.
        part_bytes = 11 * len(event_record(1, 10)) // 2
        digest = DigestWorker(
            db,
            reader,
            batch_size=batch_size,
            batch_bytes=part_bytes,
            prepare_process=prepare_process,
        )
        digest._balance.covering = lambda _kept: covering  # type: ignore[method-assign]
        return digest
    return DigestWorker(db, reader, batch_size=5, prepare_process=prepare_process)


def drained_in_parts(digest: DigestWorker) -> list[tuple[int, ...]]:
    """Digest the whole spool; the records per part of each transaction."""
    transactions = []
    try:
        while digest.run_once():
            transactions.append(digest.stats.last_parts)
    finally:
        digest.close()
    return transactions


def rows(db: Database) -> list[tuple[object, ...]]:
    """What the digest stored, without ids and times that differ between runs."""
    with db.read() as conn:
        stored = conn.execute(
            sa.select(events.c.event_id, events.c.payload, errors.c.title, errors.c.events_count)
            .join(errors, errors.c.id == events.c.error_id)
            .order_by(events.c.event_id)
        )
        return [tuple(r) for r in stored]


def test_batches_prepared_in_the_child_are_stored_as_in_process_and_once(
    settings: Settings, db: Database
) -> None:
    fill(settings, db)
    copy = settings.data_dir / "spool-copy"
    shutil.copytree(settings.spool_dir, copy)  # the same records, for the second run
    with_child = worker(settings, db, prepare_process=True)
    try:
        assert with_child.drain() == EVENTS
        assert with_child.child is not None and with_child.child.started
    finally:
        with_child.close()
    assert len(stored_ids(db)) == EVENTS
    in_child = rows(db)
    assert with_child.drain() == 0  # the cursors are past every record

    with db.write() as conn:  # again, prepared in this process
        conn.execute(sa.delete(events))
        conn.execute(sa.delete(errors))
    in_process = DigestWorker(db, SpoolReader(copy), batch_size=5, node="copy")
    assert in_process.drain() == EVENTS
    assert rows(db) == in_child


@pytest.mark.parametrize("prepare_process", [True, False], ids=["child", "in process"])
def test_a_digest_behind_writes_transactions_of_several_parts_each_record_once(
    settings: Settings, db: Database, prepare_process: bool
) -> None:
    """Each part is parsed at once, so it stays within the memory budget; the rows of
    several parts share one transaction (fewer commits: issue 10); a part that is not
    full (the digest caught up) is not waited for."""
    fill(settings, db, 23)
    digest = worker(settings, db, prepare_process=prepare_process, parts=True)
    transactions = drained_in_parts(digest)
    assert stored_ids(db) == {f"{n:032x}" for n in range(23)}
    assert sum(map(sum, transactions)) == 23
    assert all(sum(parts) <= 10 for parts in transactions)
    assert all(part <= 5 for parts in transactions[1:] for part in parts)  # [0]: a guess
    assert any(len(parts) > 1 for parts in transactions)
    assert digest.stats.parts == sum(map(len, transactions)) > digest.stats.batches
    # [(1, 5), (5, 5), (5,), (2,)]: the first part is a guess; the last records, read
    # ahead, were not a full part: they would have fit, but were not joined.
    assert transactions == [(1, 5), (5, 5), (5,), (2,)]


def test_the_next_part_is_handed_before_the_answer_to_the_last_is_taken(
    settings: Settings, db: Database
) -> None:
    """One batch deeper: while the child prepares a part, the digest reads and hands it
    the next, so the child goes on to it as soon as it has answered (it waited for the
    digest's read and lookups after each answer: docs/performance.md, "One batch
    deeper"). Each record is still stored once."""
    fill(settings, db, 23)
    digest = worker(settings, db, prepare_process=True, parts=True)
    assert digest.child is not None
    owed: list[int] = []
    result = digest.child.result

    def counted(ticket: int | None = None) -> PreparedBatch:
        owed.append(digest.child.owed)  # type: ignore[union-attr]
        return result(ticket)

    digest.child.result = counted  # type: ignore[method-assign]
    transactions = drained_in_parts(digest)
    assert stored_ids(db) == {f"{n:032x}" for n in range(23)}
    assert sum(map(sum, transactions)) == 23
    assert max(owed) == 2
    assert not digest.child.pending


def test_the_share_kept_balances_the_two_processes() -> None:
    """The digest keeps of a batch it hands over what it can prepare while the prepare
    process does the rest, after its own work in hand (records kept of the batch
    before, and the write, when it writes first)."""
    balance = _Balance()
    assert balance.share(100, 0, writes=True) == HERE_SHARE  # nothing timed yet
    balance.prepared(100, 0.1)  # 1 ms per record
    balance.wrote(0.030)
    assert balance.share(100, 0, writes=False) == 1.0  # nothing else to do: all here
    assert balance.share(100, 40, writes=False) == pytest.approx(0.6)
    assert balance.share(100, 40, writes=True) == pytest.approx(0.3)
    assert balance.share(100, 90, writes=True) == 0.0  # busy longer than the batch takes
    # A hand-over of less than a quarter of the batch costs about what it saves: none.
    assert MIN_HANDED_SHARE == 0.25
    assert balance.share(100, 26, writes=False) == pytest.approx(0.74)
    assert balance.share(100, 20, writes=False) == 1.0
    balance.prepared(100, 0.3)  # 3 ms per record: the mean moves a fifth of the way
    assert balance.per_record == pytest.approx(0.0014)


def test_the_share_handed_is_what_the_prepare_process_does_in_its_own_time() -> None:
    """The prepare process says how long it took with each answer: a faster one is handed
    more (the digest, which also writes, prepared ~4% slower, and its own figure moves
    more), a slower one less."""
    balance = _Balance()
    balance.prepared(100, 0.1)  # 1 ms per record here
    balance.wrote(0.030)
    assert balance.share(100, 40, writes=False) == pytest.approx(0.6)
    balance.child_prepared(100, 0.05)  # 0.5 ms per record there: 80 records in 40 ms
    assert balance.share(100, 40, writes=False) == pytest.approx(0.2)
    balance.child_prepared(0, 0.0)  # an empty answer says nothing
    assert balance.child_per_record == pytest.approx(0.0005)
    balance.child_prepared(50, 0.5)  # 10 ms per record: the mean moves a fifth of the way
    assert balance.child_per_record == pytest.approx(0.0024)
    assert balance.share(100, 80, writes=False) == pytest.approx(1 - 0.080 / 0.24)


def test_the_digest_counts_its_other_work_while_the_prepare_process_works() -> None:
    """Between a hand-over and the call for its answer, what the digest spends on neither
    preparing nor writing (reading the spool, bookkeeping) is overhead, and it keeps
    that much less of the next batch."""
    now = [0.0]
    balance = _Balance(clock=lambda: now[0])
    balance.prepared(100, 0.1)  # 1 ms per record
    balance.wrote(0.030)
    balance.handed()
    balance.prepared(10, 0.010)
    balance.wrote(0.030)
    now[0] = 0.050  # 10 ms of prepare and 30 of write, in 50 ms: 10 ms of other work
    balance.collecting()
    assert balance.overhead == pytest.approx(0.002)  # a moving mean: a fifth of the way
    assert balance.share(100, 40, writes=False) == pytest.approx(0.58)
    balance.collecting()  # no hand-over since: nothing measured
    assert balance.overhead == pytest.approx(0.002)


def test_a_part_handed_while_writing_is_two_parts_prepared_one_at_a_time(
    settings: Settings, db: Database
) -> None:
    """While a transaction is written, the prepare process gets two parts' worth of
    records (the write takes about as long as a part does to prepare), leaving room for
    a part to join; fewer, if at least a part, go too (the digest is not caught up); each
    record is still stored once."""
    fill(settings, db, 33)
    transactions = drained_in_parts(
        worker(settings, db, prepare_process=True, parts=True, batch_size=15)
    )
    assert stored_ids(db) == {f"{n:032x}" for n in range(33)}
    # Parts of 5 (the first a guess); (10, ...) and (7,) were handed while writing.
    assert transactions == [(1, 5, 5), (10, 5), (7,)]


@pytest.mark.parametrize(
    ("covering", "expected"),
    [(12, [(1, 5, 5), (12,), (10,)]), (99, [(1, 5, 5), (15,), (7,)])],
    ids=["twelve", "more than a batch"],
)
def test_a_longer_write_gets_a_larger_hand_over_within_the_batch_size(
    settings: Settings, db: Database, covering: int, expected: list[tuple[int, ...]]
) -> None:
    """When the prepare process can prepare more than two parts while a transaction is
    written (``_Balance.covering``: a PostgreSQL write), it is handed that many records,
    at most a batch; each record is still stored once. With two parts' worth the
    transactions would be (1, 5, 5), (10, 5), (7,)."""
    fill(settings, db, 33)
    transactions = drained_in_parts(
        worker(settings, db, prepare_process=True, parts=True, batch_size=15, covering=covering)
    )
    assert stored_ids(db) == {f"{n:032x}" for n in range(33)}
    assert transactions == expected


def test_the_hand_over_while_writing_covers_the_write_and_what_is_kept() -> None:
    """The records the prepare process prepares, at its own speed, while the digest
    prepares what it kept and writes (its other work counted too)."""
    balance = _Balance()
    assert balance.covering(40) == 0  # nothing timed yet
    balance.prepared(100, 0.1)  # 1 ms per record here
    balance.wrote(0.120)
    assert balance.covering(0) == 120  # as fast there, until it says otherwise
    assert balance.covering(30) == 150
    balance.child_prepared(100, 0.05)  # 0.5 ms per record there
    assert balance.covering(30) == 300
    balance.overhead = 0.010
    assert balance.covering(30) == 320


def test_a_batch_is_prepared_a_part_at_a_time_each_record_decoded_a_group_ahead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The projects' configurations are looked up a part at a time; each record is
    decoded (its payload inflated) at most a scan group before it is prepared, not a
    part at once, and a group does not reach into the next part."""
    decodes = [0]
    decode = SpoolRecord.decode

    def counted(cls: type[SpoolRecord], data: bytes | memoryview) -> SpoolRecord:
        decodes[0] += 1
        return decode(data)

    monkeypatch.setattr(SpoolRecord, "decode", classmethod(counted))
    decoded_before: list[int] = []  # records decoded when each was prepared

    class Counting(Preparer):
        def _add(self, batch: PreparedBatch, record: SpoolRecord, *args: Any) -> None:
            decoded_before.append(decodes[0])
            super()._add(batch, record, *args)

    raw = [event_record(1, n) for n in range(7)]
    configs = {1: ProjectConfig(project_id=1, version=1)}
    parts: list[int] = []

    def configs_of(records: Sequence[bytes | memoryview]) -> dict[int, ProjectConfig]:
        parts.append(len(records))
        return configs

    batch = prepare_in_parts(Counting(scan_group=3), raw, configs_of, 4)
    assert parts == [4, 3]
    assert decoded_before == [3, 3, 3, 4, 7, 7, 7]  # all at once would be all 7s
    assert [e.event_id for e in batch.events] == [f"{n:032x}" for n in range(7)]
    decoded_before.clear()
    assert prepare_in_parts(Counting(scan_group=1), raw, configs_of, None).events == batch.events
    assert parts[2:] == [7]
    assert decoded_before == [8, 9, 10, 11, 12, 13, 14]  # each decoded as it is prepared


@pytest.mark.parametrize("parts", [False, True], ids=["one part", "parts"])
def test_a_batch_read_ahead_is_dropped_when_the_one_before_fails(
    settings: Settings, db: Database, parts: bool
) -> None:
    fill(settings, db)
    refuse_event(db, f"{5:032x}")  # in the second batch, while the third is ahead
    digest = worker(settings, db, prepare_process=True, parts=parts)
    try:
        assert digest.drain() == EVENTS
    finally:
        digest.close()
    assert stored_ids(db) == {f"{n:032x}" for n in range(EVENTS)} - {f"{5:032x}"}


@pytest.mark.parametrize("parts", [False, True], ids=["one part", "parts"])
@pytest.mark.parametrize("connections_before", range(6))
def test_a_database_outage_at_any_point_leaves_the_child_free_and_costs_no_record(
    settings: Settings,
    db: Database,
    monkeypatch: pytest.MonkeyPatch,
    connections_before: int,
    parts: bool,
) -> None:
    """The database goes away after ``connections_before`` more connections (reads or
    writes), wherever that falls: with a batch ahead in the child, or one just handed to
    it. The child's answer is dropped, and the digest goes on once the database is back
    (before: every later batch failed with "the answer to the last batch was not taken",
    found by the disk-full scenario)."""
    fill(settings, db)
    digest = worker(settings, db, prepare_process=True, parts=parts)
    try:
        first = digest.run_once()
        assert first == 5 or (parts and first <= 10)  # parts: a guess's part of 1, then ~5s
        assert digest._ahead is not None  # the next batch is with the child now
        calls = [0]

        def until_down(connect: Callable[[], object]) -> Callable[[], object]:
            def connection() -> object:
                calls[0] += 1
                if calls[0] > connections_before:
                    raise sa.exc.OperationalError("SELECT", {}, ConnectionRefusedError())
                return connect()

            return connection

        with monkeypatch.context() as down:
            down.setattr(db, "read", until_down(db.read))
            down.setattr(db, "write", until_down(db.write))
            down.setattr(db, "ping", lambda: False)
            with pytest.raises(sa.exc.OperationalError):
                while True:
                    digest.run_once()
        assert digest.child is not None and not digest.child.pending
        digest.drain()
    finally:
        digest.close()
    assert stored_ids(db) == {f"{n:032x}" for n in range(EVENTS)}
    assert digest.child.started


@pytest.mark.parametrize("parts", [False, True], ids=["one part", "parts"])
def test_a_dead_child_costs_no_record_and_the_batch_is_prepared_here(
    settings: Settings, db: Database, caplog: pytest.LogCaptureFixture, parts: bool
) -> None:
    fill(settings, db)
    digest = worker(settings, db, prepare_process=True, parts=parts)
    try:
        first = digest.run_once()
        assert first == 5 or (parts and first <= 10)  # parts: a guess's part of 1, then ~5s
        assert digest._ahead is not None  # the next batch is with the child now
        assert digest.child is not None and digest.child.pending
        assert digest.child.pid is not None
        os.kill(digest.child.pid, signal.SIGKILL)
        assert digest.drain() == EVENTS - first
    finally:
        digest.close()
    assert stored_ids(db) == {f"{n:032x}" for n in range(EVENTS)}
    assert "the prepare process failed" in caplog.text


def test_batches_of_projects_with_source_maps_are_prepared_here(
    settings: Settings, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    project_id = fill(settings, db, 6)
    monkeypatch.setattr(artifacts, "projects_with_artifacts", lambda conn, ids: {project_id})
    digest = worker(settings, db, prepare_process=True)
    try:
        assert digest.drain() == 6
        assert digest.child is not None and not digest.child.started
    finally:
        digest.close()
    assert len(stored_ids(db)) == 6


def js_event_record(n: int, release: str | None) -> bytes:
    """A browser SDK's event: minified frames, no debug ID."""
    frames = [{"filename": "https://shop.example/static/app.min.js", "lineno": 1, "colno": 70}]
    raw = {
        "event_id": f"{n:032x}",
        "platform": "javascript",
        "exception": {"values": [{"type": "TypeError", "stacktrace": {"frames": frames}}]},
        **({"release": release} if release else {}),
    }
    return SpoolRecord(
        RecordKind.EVENT, 1, 1, time.time(), orjson.dumps(raw), event_id=f"{n:032x}"
    ).encode()


def test_the_child_explains_unmapped_frames_as_the_digest_does(db: Database) -> None:
    """The child is handed only projects without artifacts, and reads no database: it
    tells why their frames are minified ("no debug ID", "nothing uploaded for this
    release") as the digest's own symbolicator does, whichever process prepares them."""
    records = [js_event_record(1, None), js_event_record(2, "shop@4.0.0")]
    configs = {1: ProjectConfig(project_id=1, version=1)}
    symbolicator = Symbolicator(StoreArtifacts(db), MapCache(1 << 20))
    here = Preparer(symbolicator=symbolicator).prepare(read_records(records), configs)
    child = PrepareProcess()
    try:
        child.submit(records, configs)
        there = child.result()
    finally:
        child.close()

    def frames(batch: PreparedBatch) -> list[dict[str, object]]:
        events = [payloads.decode(e.payload) for e in batch.events]
        return [e["exception"]["values"][0]["stacktrace"]["frames"][0] for e in events]

    assert frames(there) == frames(here)
    assert [f["data"]["symbolication_error"] for f in frames(there)] == [  # type: ignore[index]
        "no_debug_id",
        "missing_artifact",
    ]


def test_the_child_exits_when_its_parent_dies() -> None:
    """Killed parents close no pipe themselves: the kernel does, and the child sees its
    input end. No orphan is left behind (SIGKILL of serve's background process)."""
    parent = (
        "import os, sys\n"
        "from tracebox.digest.prepare_process import PrepareProcess\n"
        "child = PrepareProcess()\n"
        "child.submit([], {})\n"
        "child.result()\n"
        "print(child.pid, flush=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    done = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True)
    assert done.returncode == -signal.SIGKILL
    pid = int(done.stdout)
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie of init's does not count)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_message_carries_its_value_and_records_byte_for_byte() -> None:
    stream = io.BytesIO()
    stream.write(b"".join(_message({"a": 1}, [b"one", b"", b"three"])))  # a request
    _send(stream, "end")  # an answer
    stream.seek(0)
    reader = io.BufferedReader(stream)
    value, records = _receive(reader) or (None, [])
    assert (value, [bytes(r) for r in records]) == ({"a": 1}, [b"one", b"", b"three"])
    assert _receive(reader) == ("end", [])
    assert _receive(reader) is None


def test_a_request_of_more_buffers_than_one_write_takes_arrives_in_order() -> None:
    """``os.writev`` takes at most ``SC_IOV_MAX`` buffers (1,024 on Linux) and may write
    part of one; a batch of 3,000 records is still written whole and in order."""
    buffers = [str(n).encode() * (n % 7) for n in range(3_000)]  # some empty
    expected = b"".join(buffers)
    read_end, write_end = os.pipe()
    received = bytearray()

    def read() -> None:
        while chunk := os.read(read_end, 1 << 16):
            received.extend(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        _write_all(write_end, buffers)
    finally:
        os.close(write_end)
        reader.join(30)
        os.close(read_end)
    assert bytes(received) == expected


def test_a_prepared_batch_crosses_the_pipe_whole() -> None:
    records = read_records([event_record(1, n) for n in range(3)])
    batch = Preparer().prepare(records, {1: ProjectConfig(project_id=1, version=1)})
    stream = io.BytesIO()
    _send(stream, _compact(batch))
    stream.seek(0)
    value, _ = _receive(io.BufferedReader(stream)) or (None, [])
    assert len(batch.events) == 3
    assert _expanded(*value) == batch


def test_an_answer_says_how_long_the_child_took_to_prepare_its_records() -> None:
    child = PrepareProcess()
    try:
        records = [event_record(1, n) for n in range(3)]
        child.submit(records, {1: ProjectConfig(project_id=1, version=1)})
        assert child.timed is None  # nothing answered yet
        assert len(child.result().events) == 3
        assert child.timed is not None
        records, seconds = child.timed
        assert records == 3 and 0 < seconds < 30
    finally:
        child.close()


def test_the_pipes_to_the_child_hold_a_batch_of_records_at_once() -> None:
    """A batch's records and its answer (~1-1.5 MB each) cross in a few writes, not
    twenty pipe-fulls of 64 KiB (docs/performance.md)."""
    getsize = getattr(fcntl, "F_GETPIPE_SZ", None)
    if getsize is None:
        pytest.skip("pipe sizes are set on Linux only")
    child = PrepareProcess()
    try:
        child.submit([], {})
        child.result()
        proc = child._proc  # the handle's own pipes: no other way to see them
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        sizes = [fcntl.fcntl(p.fileno(), getsize) for p in (proc.stdin, proc.stdout)]
    finally:
        child.close()
    assert sizes == [PIPE_BYTES, PIPE_BYTES]


def test_the_child_stops_when_closed() -> None:
    child = PrepareProcess()
    child.submit([], {1: ProjectConfig(project_id=1, version=1)})
    assert child.result() == PreparedBatch()
    pid = child.pid
    assert pid is not None
    child.close()
    assert not _alive(pid)


def test_the_child_imports_no_database_layer() -> None:
    """Its memory counts toward the server's (issue 10: 250 MB for every process)."""
    setup = "import tracebox.digest.prepare_process"
    assert modules_loaded(setup, ("sqlalchemy", "pydantic", "httpx")) == []


def test_a_child_that_cannot_answer_is_gone() -> None:
    child = PrepareProcess()
    child.submit([], {})
    assert child.pid is not None
    os.kill(child.pid, signal.SIGKILL)
    with pytest.raises(ChildGone):
        child.result()
    with pytest.raises(ChildGone):  # not restarted at once: in-process until the interval
        child.submit([], {})
    child.close()


def test_an_answer_not_taken_is_dropped_before_the_next_batch(
    caplog: pytest.LogCaptureFixture,
) -> None:
    records = [event_record(1, n) for n in range(3)]
    configs = {1: ProjectConfig(project_id=1, version=1)}
    child = PrepareProcess()
    try:
        child.submit(records[:1], configs)
        child.submit(records, configs)  # the first answer is still in the pipe
        assert len(child.result().events) == 3
        assert not child.pending
    finally:
        child.close()
    assert "the answer to an earlier batch was not taken; dropped" in caplog.text


def test_batches_handed_one_after_the_other_are_answered_in_order() -> None:
    records = [event_record(1, n) for n in range(3)]
    configs = {1: ProjectConfig(project_id=1, version=1)}
    child = PrepareProcess()
    try:
        first = child.submit(records[:1], configs)
        second = child.submit(records, configs)
        assert child.owed == 2
        assert [e.event_id for e in child.result(first).events] == [f"{0:032x}"]
        assert child.timed is not None and child.timed[0] == 1
        assert [e.event_id for e in child.result(second).events] == [f"{n:032x}" for n in range(3)]
        assert child.timed is not None and child.timed[0] == 3
        assert not child.pending
    finally:
        child.close()


def test_both_batches_in_hand_are_gone_with_the_child() -> None:
    child = PrepareProcess()
    first = child.submit([], {})
    second = child.submit([], {})
    assert child.pid is not None
    os.kill(child.pid, signal.SIGKILL)
    for ticket in (first, second):
        with pytest.raises(ChildGone):
            child.result(ticket)
    assert not child.pending
    child.close()


def large_event_record(n: int) -> bytes:
    """~21 KB of event that compresses little (~15 KB spooled, ~10 KB prepared)."""
    extra = {f"k{i}": os.urandom(256).hex() for i in range(40)}
    raw = {"event_id": f"{n:032x}", "message": f"order {n} failed", "extra": extra}
    return SpoolRecord(
        RecordKind.EVENT, 1, 1, time.time(), orjson.dumps(raw), event_id=f"{n:032x}"
    ).encode()


def within(seconds: float, work: Callable[[], object], child: PrepareProcess) -> None:
    """Run ``work``; a child that is stuck after ``seconds`` is killed, which ends any
    wait on it, and the test fails."""
    done = threading.Event()

    def run() -> None:
        with contextlib.suppress(ChildGone):
            work()
        done.set()

    threading.Thread(target=run, daemon=True).start()
    if not done.wait(seconds):
        if child.pid is not None:
            os.kill(child.pid, signal.SIGKILL)
        pytest.fail(f"stuck for {seconds} s: each process waited for the other")


def test_a_batch_handed_before_the_last_answer_is_taken_outgrows_both_pipes() -> None:
    """The request and the answer each hold more than a pipe (``PIPE_BYTES``): written
    by the digest's own thread, the second request would wait for the child to read
    it, and the child, for the digest to read its first answer."""
    records = [large_event_record(n) for n in range(200)]
    configs = {1: ProjectConfig(project_id=1, version=1)}
    halves = records[:100], records[100:]
    assert all(sum(map(len, _message((configs, [1], None), h))) > PIPE_BYTES for h in halves)
    child = PrepareProcess()
    answers: list[PreparedBatch] = []

    def hand_two() -> None:
        tickets = [child.submit(h, configs) for h in halves]
        answers.extend(child.result(t) for t in tickets)

    try:
        within(60, hand_two, child)
    finally:
        child.close()
    assert [len(a.events) for a in answers] == [100, 100]
    assert len(pickle.dumps(_compact(answers[0]))) > PIPE_BYTES


def test_a_child_closed_with_two_large_batches_in_hand_stops() -> None:
    records = [large_event_record(n) for n in range(200)]
    configs = {1: ProjectConfig(project_id=1, version=1)}
    child = PrepareProcess()
    child.submit(records[:100], configs)
    child.submit(records[100:], configs)
    pid = child.pid
    assert pid is not None
    within(30, child.close, child)
    assert not _alive(pid)
    assert not child.pending


def test_the_prepare_process_is_on_with_either_database_unless_set_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRACEBOX_DIGEST_PREPARE_PROCESS", raising=False)
    pg = "postgresql://u@db.internal/tracebox"
    assert Settings(data_dir=tmp_path).digest_prepare_process
    assert Settings(data_dir=tmp_path, database_url=pg).digest_prepare_process
    monkeypatch.setenv("TRACEBOX_DIGEST_PREPARE_PROCESS", "false")
    assert not Settings(data_dir=tmp_path, database_url=pg).digest_prepare_process
