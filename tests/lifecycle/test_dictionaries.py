"""zstd dictionaries per project: trained from the project's events, stored versioned,
named in each payload's frame header, and every older payload still readable."""

from __future__ import annotations

import dataclasses
import time
import tracemalloc

import orjson
import pytest
import sqlalchemy as sa
import zstandard

from tests.digest.test_worker import spool
from tests.lifecycle.helpers import event, project, store
from tracebox.config import Settings
from tracebox.digest.worker import DigestWorker
from tracebox.lifecycle import compression
from tracebox.spool import SpoolReader
from tracebox.spool.record import RecordKind, SpoolRecord
from tracebox.store import Database, dictionaries, errors_read, payloads
from tracebox.store.tables import errors, events


def frames(n: int) -> list[dict[str, object]]:
    return [
        {
            "filename": f"app/services/module_{n % 13}/handler_{k}.py",
            "function": f"handle_{n}_{k}",
            "lineno": 10 + k,
            "in_app": True,
            "context_line": f"    result = service_{k}.process(order_id={n}, retries={k})",
            "pre_context": ["def handle(order):", "    # validate the order first"],
            "post_context": ["    return result", ""],
        }
        for k in range(12)
    ]


def rich_event(n: int, i: int) -> dict[str, object]:
    return event(
        f"order {n} could not be processed",
        exc_type=f"OrderError{n}",
        user={"id": str(1000 + i), "email": f"user{i}@example.com"},
        breadcrumbs=[{"category": "http", "message": f"GET /api/orders/{n}?page={i}"}] * 5,
        contexts={"os": {"name": "Linux", "version": "6.1"}, "runtime": {"name": "CPython"}},
        request={"url": f"https://shop.example.com/orders/{n}", "method": "POST"},
    ) | {
        "exception": {
            "values": [
                {
                    "type": f"OrderError{n}",
                    "value": f"order {n}",
                    "stacktrace": {"frames": frames(n)},
                }
            ]
        }
    }


@pytest.fixture
def trained_project(db: Database, settings: Settings) -> int:
    p = project(db, "acme/web")
    for n in range(40):
        store(db, p, *[rich_event(n, i) for i in range(5)], at=time.time() - 3600)
    return p


def test_a_payload_names_its_dictionary_and_needs_it_to_be_read() -> None:
    raw = zstandard.train_dictionary(8192, [orjson.dumps(rich_event(n, 1)) for n in range(200)])
    dictionary = payloads.Dictionary(5, payloads.with_dictionary_id(raw.as_bytes(), 5))
    one = rich_event(1, 1)
    plain = payloads.PayloadEncoder().encode(one)
    packed = payloads.PayloadEncoder().encode(one, dictionary)

    assert payloads.dictionary_of(plain) is None
    assert payloads.dictionary_of(packed) == 5
    assert len(packed) < len(plain)
    with pytest.raises(ValueError, match="dictionary 5"):
        payloads.decode(packed)
    lookup = {5: payloads.decompressor(dictionary.data)}.get
    assert payloads.decode(packed, lookup) == payloads.decode(plain) == one


def test_an_encoded_payload_holds_no_more_memory_than_its_size() -> None:
    """zstandard's ``compress`` returns bytes holding the worst case's allocation (about
    the input's size); the digest holds a transaction's payloads until it writes them."""
    encoder = payloads.PayloadEncoder()
    events = [rich_event(n, 1) for n in range(50)]
    encoder.encode(events[0])
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        encoded = [encoder.encode(e) for e in events]
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    sizes = sum(map(len, encoded))
    assert sizes < sum(len(orjson.dumps(e)) for e in events) / 3  # well compressed
    assert held < 1.5 * sizes + 100 * len(events)  # was about 4x: each input's size
    assert [payloads.decode(p) for p in encoded] == events


def test_training_stores_versions_and_every_payload_stays_readable(
    db: Database, settings: Settings, trained_project: int
) -> None:
    p = trained_project
    cfg = dataclasses.replace(settings, dictionary_min_events=150, dictionary_bytes=16384)
    assert compression.due(db, cfg, time.time()) == [p]

    first = compression.train(db, p, cfg.dictionary_bytes).dictionary
    assert first is not None and first.version == 1 and first.used
    assert first.trained_bytes < first.plain_bytes * 0.9
    assert compression.due(db, cfg, time.time()) == []
    assert compression.due(db, cfg, time.time() + 31 * 86400) == [p]

    # New events of the project are written with its dictionary (as the digest does).
    with db.read() as conn:
        v1 = dictionaries.current(conn, [p])[p]
    encoder = payloads.PayloadEncoder()
    with db.write() as conn:
        error_id = conn.execute(sa.select(errors.c.id).limit(1)).scalar_one()
        row = conn.execute(sa.select(events).where(events.c.error_id == error_id).limit(1)).one()
        conn.execute(
            events.update()
            .where(events.c.id == row.id)
            .values(payload=encoder.encode(payloads.decode(row.payload), v1))
        )
    second = compression.train(db, p, cfg.dictionary_bytes).dictionary
    assert second is not None and second.version == 2

    with db.read() as conn:
        assert dictionaries.current(conn, [p])[p].id == second.id
        read = errors_read.list_events(conn, error_id, after=None, before=None, limit=100)
        stored = [
            payloads.dictionary_of(bytes(b))
            for b in conn.execute(
                sa.select(events.c.payload).where(events.c.error_id == error_id)
            ).scalars()
        ]
    assert v1.id in stored and None in stored  # a v1 payload next to plain ones
    assert len(read) == 5
    assert all(e.payload["event_id"] == e.event_id for e in read)


def test_a_project_with_too_few_events_is_not_trained(db: Database, settings: Settings) -> None:
    p = project(db, "acme/tiny")
    store(db, p, *[event(f"e{i}") for i in range(20)])
    assert compression.due(db, settings, time.time()) == []
    assert compression.train(db, p, settings.dictionary_bytes).dictionary is None


def test_the_digest_compresses_a_trained_projects_new_events_with_its_dictionary(
    db: Database, settings: Settings, trained_project: int
) -> None:
    p = trained_project
    worker = DigestWorker(db, SpoolReader(settings.spool_dir), batch_size=100)
    spool(settings, [rich_record(p, n) for n in (1000, 1001)])
    assert worker.drain() == 2  # before training: plain payloads

    trained = compression.train(db, p, 16384).dictionary
    assert trained is not None and trained.used
    spool(settings, [rich_record(p, n) for n in (1002, 1003)])
    assert worker.drain() == 2  # the same worker: its cached configuration moved on

    with db.read() as conn:
        rows = conn.execute(
            sa.select(events.c.event_id, events.c.payload).where(events.c.event_id.like("%100_"))
        ).all()
        errors_of = {
            e: conn.execute(sa.select(events.c.error_id).where(events.c.event_id == e)).scalar_one()
            for e, _ in rows
        }
        readable = {
            e.event_id
            for error_id in set(errors_of.values())
            for e in errors_read.list_events(conn, error_id, after=None, before=None, limit=50)
        }
    used = {event_id[-4:]: payloads.dictionary_of(bytes(data)) for event_id, data in rows}
    assert used == {"1000": None, "1001": None, "1002": trained.id, "1003": trained.id}
    assert set(errors_of) <= readable


def rich_record(project_id: int, n: int) -> bytes:
    raw = rich_event(n % 40, n) | {"event_id": f"{n:032d}"}
    return SpoolRecord(
        kind=RecordKind.EVENT,
        project_id=project_id,
        key_id=1,
        received=time.time(),
        payload=orjson.dumps(raw),
        event_id=f"{n:032d}",
    ).encode()
