"""The digest worker: batches from the spool into the store, exactly once, never stalled."""

from __future__ import annotations

import time

import orjson
import pytest
import sqlalchemy as sa

from tracebox.config import Settings
from tracebox.digest import worker as worker_module
from tracebox.digest.worker import DigestWorker
from tracebox.spool import RecordKind, SpoolReader, SpoolRecord, SpoolWriter
from tracebox.store import Database, cursors, projects
from tracebox.store.tables import dropped_items, events
from tracebox.store.tables import projects as projects_table


def event_record(project_id: int, n: int) -> bytes:
    raw = {"event_id": f"{n:032x}", "message": f"order {n} failed", "level": "error"}
    record = SpoolRecord(
        kind=RecordKind.EVENT,
        project_id=project_id,
        key_id=1,
        received=time.time(),
        payload=orjson.dumps(raw),
        event_id=f"{n:032x}",
    )
    return record.encode()


def spool(settings: Settings, records: list[bytes]) -> None:
    writer = SpoolWriter(
        settings.spool_dir,
        segment_bytes=1 << 20,
        max_undigested_bytes=1 << 30,
        commit_interval_s=0,
        retry_after=30,
    )
    writer.start_sync()
    writer.append_sync(records)
    writer.close_sync()


def stored_ids(db: Database) -> set[str]:
    with db.read() as conn:
        return {r[0] for r in conn.execute(sa.select(events.c.event_id))}


def refuse_event(db: Database, event_id: str) -> None:
    """Make the database refuse to store one event (a trigger), as it may refuse a row
    for reasons the digest cannot foresee."""
    with db.write() as conn:
        if db.is_sqlite:
            conn.exec_driver_sql(
                "CREATE TRIGGER refuse BEFORE INSERT ON events "
                f"WHEN NEW.event_id = '{event_id}' BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )
        else:
            conn.exec_driver_sql(
                "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN "
                f"IF NEW.event_id = '{event_id}' THEN RAISE EXCEPTION 'refused'; END IF; "
                "RETURN NEW; END $$ LANGUAGE plpgsql"
            )
            conn.exec_driver_sql(
                "CREATE TRIGGER refuse BEFORE INSERT ON events "
                "FOR EACH ROW EXECUTE FUNCTION refuse()"
            )


def test_a_record_the_database_refuses_is_set_aside_not_retried_forever(
    settings: Settings, db: Database
) -> None:
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
    refuse_event(db, f"{2:032x}")
    spool(settings, [event_record(project.id, n) for n in (1, 2, 3)])
    worker = DigestWorker(db, SpoolReader(settings.spool_dir), batch_size=10)
    assert worker.drain() == 3
    assert stored_ids(db) == {f"{1:032x}", f"{3:032x}"}
    assert worker.drain() == 0  # the cursor moved past the refused record
    with db.read() as conn:
        dropped = {r.item_type: r.count for r in conn.execute(sa.select(dropped_items))}
    assert dropped == {"digest_refused": 1}


def test_records_of_a_deleted_project_are_set_aside(settings: Settings, db: Database) -> None:
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
    # Project 999 does not exist (deleted after ingestion).
    records = [event_record(project.id, 1), event_record(999, 2), event_record(project.id, 3)]
    spool(settings, records)
    worker = DigestWorker(db, SpoolReader(settings.spool_dir), batch_size=10)
    assert worker.drain() == 3
    assert worker.stats.batches == 1  # set aside before the write: the batch was not refused
    assert stored_ids(db) == {f"{1:032x}", f"{3:032x}"}
    with db.read() as conn:
        dropped = conn.execute(sa.select(dropped_items)).all()
    assert dropped == []  # no project to count it against


def test_batches_are_applied_once(settings: Settings, db: Database) -> None:
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
    spool(settings, [event_record(project.id, n) for n in range(25)])
    worker = DigestWorker(db, SpoolReader(settings.spool_dir), batch_size=10)
    assert worker.drain() == 25
    assert worker.stats.batches == 3
    assert worker.drain() == 0
    assert len(stored_ids(db)) == 25


class _Arrivals:
    """The stop event of ``run_forever``: each wait is recorded with the size of the batch
    before it, and the next arrival of records is spooled during it (as if they came
    meanwhile); once none is left, the wait stops the digest."""

    def __init__(
        self, settings: Settings, digest: DigestWorker, project_id: int, arrivals: list[int]
    ) -> None:
        self.settings, self.digest, self.arrivals = settings, digest, arrivals
        self.project_id = project_id
        self.waits: list[tuple[int, float]] = []  # (records of the batch before, seconds)
        self.stopped = False
        self.next_id = 100

    def is_set(self) -> bool:
        return self.stopped

    def wait(self, timeout: float) -> bool:
        self.waits.append((self.digest.stats.last_batch_size, timeout))
        if not self.arrivals:
            self.stopped = True
            return True
        count = self.arrivals.pop(0)
        ids = range(self.next_id, self.next_id + count)
        self.next_id += count
        spool(self.settings, [event_record(self.project_id, n) for n in ids])
        return False


def test_a_digest_that_keeps_up_starts_a_batch_at_most_once_per_interval(
    settings: Settings, db: Database
) -> None:
    """What arrives while the digest waits is one batch, however it arrived; a digest that
    is behind (its batch was full) does not wait."""
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
    spool(settings, [event_record(project.id, n) for n in range(3)])
    digest = DigestWorker(db, SpoolReader(settings.spool_dir), batch_size=10)
    stop = _Arrivals(settings, digest, project.id, [4, 12])
    digest.run_forever(stop, poll_interval=0.001, batch_interval=5.0)  # type: ignore[arg-type]
    assert [records for records, _ in stop.waits] == [3, 4, 2]  # not after the 10
    assert all(4.0 < seconds <= 5.0 for _, seconds in stop.waits)
    assert digest.stats.batches == 4
    assert len(stored_ids(db)) == 3 + 4 + 12


def test_the_batch_budget_counts_compressed_payloads_at_their_decoded_size(
    settings: Settings, db: Database
) -> None:
    """The spool holds events compressed (a 3-4x smaller record); a part's events are
    parsed at once, so the memory budget counts them as they will be once decoded."""
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
    frames = [{"filename": f"app/module_{n % 7}.py", "lineno": n} for n in range(150)]
    records = []
    for n in range(30):
        raw = {"event_id": f"{n:032x}", "message": f"order {n} failed", "frames": frames}
        payload = orjson.dumps(raw)
        record = SpoolRecord(RecordKind.EVENT, project.id, 1, time.time(), payload)
        records.append(record.encode())
    decoded = SpoolRecord.decoded_size(records[0])
    assert decoded > 3 * len(records[0])  # compressed in the spool
    spool(settings, records)
    worker = DigestWorker(
        db, SpoolReader(settings.spool_dir), batch_size=100, batch_bytes=5 * decoded
    )
    parts: list[int] = []  # parsed at once: several may share a transaction
    while worker.run_once():
        parts += worker.stats.last_parts
    assert sum(parts) == 30
    assert max(parts[1:]) <= 5  # the first part is sized on a guess
    assert len(stored_ids(db)) == 30


def test_a_record_of_the_previous_spool_format_is_digested(
    settings: Settings, db: Database
) -> None:
    """A spool left by the version that normalized at ingestion survives an upgrade."""
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
    now = time.time()
    event = {"event_id": "e" * 32, "timestamp": now, "received": now, "platform": "python"}
    event |= {"level": "error", "environment": "production", "tags": [["shard", "3"]]}
    event |= {"logentry": {"message": "old format", "params": [], "formatted": "old format"}}
    legacy = {"kind": "event", "project_id": project.id, "key_id": 1, "received": now}
    spool(settings, [orjson.dumps({**legacy, "payload": event}), event_record(project.id, 1)])
    worker = DigestWorker(db, SpoolReader(settings.spool_dir), batch_size=10)
    assert worker.drain() == 2
    assert stored_ids(db) == {"e" * 32, f"{1:032x}"}


def test_unusable_records_are_set_aside_and_counted_per_project(
    settings: Settings, db: Database
) -> None:
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
    good = event_record(project.id, 1)
    not_json = SpoolRecord(RecordKind.EVENT, project.id, 1, time.time(), b'{"a": }', None)
    header = orjson.dumps({"k": "hologram", "p": project.id, "c": 1, "r": time.time()})
    unknown_kind = b"\x01" + len(header).to_bytes(4, "little") + header + b"data"
    spool(settings, [not_json.encode(), b"\x07garbage", unknown_kind, good])
    worker = DigestWorker(db, SpoolReader(settings.spool_dir), batch_size=10)
    assert worker.drain() == 4
    assert stored_ids(db) == {f"{1:032x}"}
    with db.read() as conn:
        dropped = {r.item_type: r.count for r in conn.execute(sa.select(dropped_items))}
    assert dropped == {"event_invalid_json": 1, "record_unreadable": 1}


def test_a_configuration_change_is_seen_by_the_next_batch(settings: Settings, db: Database) -> None:
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
    worker = DigestWorker(db, SpoolReader(settings.spool_dir), batch_size=10)

    def version() -> int:
        with db.read() as conn:
            return worker.configs.load(conn, [project.id])[project.id].version

    assert version() == 0
    with db.write() as conn:
        projects.bump_config(conn, project.id)
    assert version() == 1
    with db.write() as conn:
        conn.execute(sa.delete(projects_table))
    with db.read() as conn:
        assert worker.configs.load(conn, [project.id]) == {}


def test_cursor_rows_of_deleted_segments_are_removed(settings: Settings, db: Database) -> None:
    """A finished segment, once digested, is deleted with its cursor row; rows left by a
    digest that died between the two are removed at the next start; other nodes' rows stay."""
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
        cursors.advance(conn, "me", {"00000000000000000001-gone.seg": 99})
        cursors.advance(conn, "other", {"00000000000000000002-theirs.seg": 77})
    for batch in range(3):  # three writers, three finished segments
        spool(settings, [event_record(project.id, batch * 10 + n) for n in range(5)])
    assert len(list(settings.spool_dir.glob("*.seg"))) == 3
    worker = DigestWorker(db, SpoolReader(settings.spool_dir), batch_size=4, node="me")
    assert worker.drain() == 15
    assert list(settings.spool_dir.glob("*.seg")) == []
    with db.read() as conn:
        assert cursors.load(conn, "me") == {}
        assert cursors.load(conn, "other") == {"00000000000000000002-theirs.seg": 77}


def vacuums_of_errors(db: Database) -> int | None:
    """How many times the errors table was vacuumed by hand (PostgreSQL; None on SQLite)."""
    if db.is_sqlite:
        return None
    with db.read() as conn:
        sql = "SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'errors'"
        return int(conn.exec_driver_sql(sql).scalar_one())


def test_the_errors_table_is_vacuumed_after_a_batch_at_most_once_per_interval(
    settings: Settings, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every batch leaves a version of each error it counted (store.churn): the digest
    vacuums the table after a batch, then not again before VACUUM_INTERVAL_S."""
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
    spool(settings, [event_record(project.id, n) for n in range(6)])
    worker = DigestWorker(db, SpoolReader(settings.spool_dir), batch_size=2)
    before = vacuums_of_errors(db)
    assert worker.run_once() == 2
    after_first = vacuums_of_errors(db)
    assert worker.run_once() == 2  # at once: within the interval
    assert vacuums_of_errors(db) == after_first
    monkeypatch.setattr(worker_module, "VACUUM_INTERVAL_S", 0.0)
    monkeypatch.setattr(worker_module, "VACUUM_SHARE", 1.0)
    worker2 = DigestWorker(db, SpoolReader(settings.spool_dir), batch_size=2)
    assert worker2.run_once() == 2
    if before is not None:
        assert after_first == before + 1
        assert vacuums_of_errors(db) == before + 2
    assert len(stored_ids(db)) == 6


def test_a_failed_vacuum_does_not_fail_the_committed_batch(
    settings: Settings, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(_: Database) -> None:
        raise sa.exc.OperationalError("VACUUM", {}, Exception("permission denied"))

    monkeypatch.setattr(worker_module.churn, "vacuum_churned", refuse)
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
    spool(settings, [event_record(project.id, n) for n in range(3)])
    worker = DigestWorker(db, SpoolReader(settings.spool_dir), batch_size=10)
    assert worker.run_once() == 3
    assert len(stored_ids(db)) == 3
