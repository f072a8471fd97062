"""What ingest does before the 200: the item bytes spooled as received, the event id
decided, credentials and rate limit checked before the body; the rest is the digest's."""

from __future__ import annotations

import binascii
import dataclasses
import gc
import gzip
import os
import time
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import orjson
import pytest
import sqlalchemy as sa

from tests.helpers import FsyncGate
from tests.ingest.conftest import Ingest, make_ingest
from tests.ingest.test_ingest_endpoints import EVENT, envelope
from tracebox.config import Settings
from tracebox.ingest.process import Accepted
from tracebox.ingest.routes import OFF_LOOP_BODY_BYTES
from tracebox.spool import RecordKind, SpoolReader, SpoolRecord
from tracebox.store import Database
from tracebox.store.tables import events


def spooled(ingest: Ingest) -> list[SpoolRecord]:
    batch = SpoolReader(ingest.settings.spool_dir).read({}, 1000)
    return [SpoolRecord.decode(raw) for raw in batch.records]


def stored_event_ids(ingest: Ingest) -> list[str]:
    ingest.digest()
    with ingest.db.read() as conn:
        return [row[0] for row in conn.execute(sa.select(events.c.event_id))]


def test_event_item_is_spooled_byte_for_byte(ingest: Ingest) -> None:
    payload = b'{ "message" : "caf\xc3\xa9",  "level":"warning", "extra": {"n": 1.50} }'
    body = envelope(({"type": "event"}, payload), headers={"event_id": "c" * 32})
    r = ingest.client.post(
        ingest.url("envelope"),
        content=gzip.compress(body),
        headers={**ingest.auth(), "Content-Encoding": "gzip"},
    )
    assert r.status_code == 200, r.text
    [record] = spooled(ingest)
    assert record.kind is RecordKind.EVENT
    assert record.payload == payload
    assert (record.project_id, record.key_id) == (ingest.project_id, ingest.key.id)
    assert (record.event_id, record.client_ip) == ("c" * 32, "203.0.113.7")
    assert stored_event_ids(ingest) == ["c" * 32]


_ENCODERS = {
    "gzip": gzip.compress,
    "X-Gzip": gzip.compress,
    "deflate": zlib.compress,
    "identity": lambda body: body,
}


@pytest.mark.parametrize(
    ("encoding", "attachment", "as_sent"),
    [
        ("gzip", b"", True),
        ("X-Gzip", b"", True),
        ("gzip", b"a" * 2000, False),  # the body holds more than the event: compressed alone
        ("deflate", b"", False),
        ("identity", b"", False),
    ],
)
def test_an_event_that_is_nearly_all_of_a_gzip_body_is_spooled_as_that_body(
    ingest: Ingest, encoding: str, attachment: bytes, as_sent: bool
) -> None:
    """The web worker compresses nothing for it; the digest reads the item back from it."""
    payload = orjson.dumps({**EVENT, "extra": {"padding": "p" * 3000}})
    items = [({"type": "event"}, payload)]
    if attachment:
        items.append(({"type": "attachment", "length": len(attachment)}, attachment))
    body = _ENCODERS[encoding](envelope(*items, headers={"event_id": "c" * 32}))
    r = ingest.client.post(
        ingest.url("envelope"),
        content=body,
        headers={**ingest.auth(), "Content-Encoding": encoding},
    )
    assert r.status_code == 200, r.text
    raw = SpoolReader(ingest.settings.spool_dir).read({}, 1000).records
    record = SpoolRecord.decode(raw[0])
    assert (record.kind, record.payload) == (RecordKind.EVENT, payload)
    assert raw[0].endswith(body) is as_sent
    assert stored_event_ids(ingest) == ["c" * 32]


@pytest.mark.parametrize(
    ("headers", "payload_id", "expected"),
    [
        ({"event_id": "d" * 32}, "e" * 32, "d" * 32),  # the envelope's id wins, as Relay
        ({}, "E" * 8 + "-" + "e" * 4 + "-" + "e" * 4 + "-" + "e" * 4 + "-" + "e" * 12, "e" * 32),
        ({}, None, None),  # none sent: ingest makes one
    ],
)
def test_the_answered_id_is_the_stored_id(
    ingest: Ingest, headers: dict[str, object], payload_id: str | None, expected: str | None
) -> None:
    event = {k: v for k, v in EVENT.items() if k != "event_id"}
    if payload_id:
        event["event_id"] = payload_id
    body = envelope(({"type": "event"}, orjson.dumps(event)), headers=headers)
    r = ingest.client.post(ingest.url("envelope"), content=body, headers=ingest.auth())
    answered = r.json()["id"]
    assert answered == expected or (expected is None and len(answered) == 32)
    assert stored_event_ids(ingest) == [answered]


@pytest.mark.parametrize(
    ("encoding", "base64", "as_sent"),
    [("gzip", False, True), ("gzip", True, False), ("deflate", False, False)],
)
def test_a_store_body_sent_as_gzip_is_spooled_as_that_body(
    ingest: Ingest, encoding: str, base64: bool, as_sent: bool
) -> None:
    """sentry-python and sentry-php send their errors to the store endpoint, gzip."""
    payload = orjson.dumps({**EVENT, "event_id": "d" * 32, "extra": {"padding": "p" * 3000}})
    json = binascii.b2a_base64(zlib.compress(payload)) if base64 else payload
    body = _ENCODERS[encoding](json)
    r = ingest.client.post(
        ingest.url("store"), content=body, headers={**ingest.auth(), "Content-Encoding": encoding}
    )
    assert r.status_code == 200, r.text
    [raw] = SpoolReader(ingest.settings.spool_dir).read({}, 1000).records
    assert SpoolRecord.decode(raw).payload == payload
    assert raw.endswith(body) is as_sent
    assert stored_event_ids(ingest) == ["d" * 32]


def test_store_body_without_an_id_gets_one_that_is_stored(ingest: Ingest) -> None:
    event = {k: v for k, v in EVENT.items() if k != "event_id"}
    r = ingest.client.post(ingest.url("store"), content=orjson.dumps(event), headers=ingest.auth())
    assert stored_event_ids(ingest) == [r.json()["id"]]


def test_invalid_json_that_looks_like_an_object_is_counted_by_the_digest(ingest: Ingest) -> None:
    """The cheap check before the 200 cannot see this; the digest sets it aside."""
    body = envelope(({"type": "event"}, b'{"message": }'), headers={"event_id": "f" * 32})
    r = ingest.client.post(ingest.url("envelope"), content=body, headers=ingest.auth())
    assert r.status_code == 200, r.text
    assert r.json() == {"id": "f" * 32}
    counts = ingest.counts()
    assert counts["events"] == 0
    assert counts["dropped"] == {"event_invalid_json": 1}


def test_a_json_array_event_item_is_refused_before_the_200(ingest: Ingest) -> None:
    body = envelope(({"type": "event"}, b'[{"message": "x"}]'))
    r = ingest.client.post(ingest.url("envelope"), content=body, headers=ingest.auth())
    assert r.status_code == 400
    assert "JSON object" in r.json()["detail"]


def session(**changes: object) -> dict[str, object]:
    return {
        "sid": "c" * 32,
        "init": True,
        "started": int(time.time()) - 60,
        "status": "exited",
        "attrs": {"release": "web@1.0", "environment": "prod"},
        **changes,
    }


def test_invalid_sessions_are_dropped_silently_by_the_digest(ingest: Ingest) -> None:
    body = envelope(
        ({"type": "session"}, orjson.dumps(session(attrs={}))),  # no release: Relay drops it
        ({"type": "session"}, b"{not json}"),
        ({"type": "sessions"}, orjson.dumps({"aggregates": []})),
        ({"type": "session"}, b"[]"),  # refused at ingest: not an object
        ({"type": "session"}, orjson.dumps(session())),
    )
    r = ingest.client.post(ingest.url("envelope"), content=body, headers=ingest.auth())
    assert r.status_code == 200, r.text
    counts = ingest.counts()
    assert counts["sessions"] == 1
    assert counts["dropped"] == {
        "session_invalid": 2,  # no release; refused at ingest: not an object
        "session_invalid_json": 1,
        "sessions_invalid": 1,
    }


@pytest.fixture
def small_sessions(settings: Settings, db: Database) -> Iterator[Ingest]:
    yield from make_ingest(dataclasses.replace(settings, max_session_bytes=1000), db)


def test_session_item_at_and_past_the_size_limit(small_sessions: Ingest) -> None:
    ing = small_sessions
    base = orjson.dumps(session(pad=""))
    at_limit = orjson.dumps(session(pad="x" * (1000 - len(base))))
    past = orjson.dumps(session(sid="d" * 32, pad="x" * (1001 - len(base))))
    assert (len(at_limit), len(past)) == (1000, 1001)
    body = envelope(({"type": "session"}, at_limit), ({"type": "session"}, past))
    r = ing.client.post(ing.url("envelope"), content=body, headers=ing.auth())
    assert r.status_code == 200, r.text
    counts = ing.counts()
    assert counts["sessions"] == 1
    assert counts["dropped"] == {"session_too_large": 1}


def test_credentials_are_checked_before_the_body_is_read(ingest: Ingest) -> None:
    """A malformed body from an unknown key gets 401, not 400: the body was never read."""
    unknown = {"X-Sentry-Auth": f"Sentry sentry_key={'f' * 32}"}
    for endpoint in ("store", "envelope"):
        r = ingest.client.post(ingest.url(endpoint), content=b"\xff garbage", headers=unknown)
        assert r.status_code == 401, r.text


@pytest.fixture
def limited(settings: Settings, db: Database) -> Iterator[Ingest]:
    # The limit counts per minute of the clock: one that stands still, so the minute
    # cannot end between the requests that fill it and the one it refuses.
    limited = dataclasses.replace(settings, rate_limit_events_per_minute=1)
    yield from make_ingest(limited, db, limits_at=time.time())


def test_a_key_over_its_limit_is_refused_before_its_body_is_read(limited: Ingest) -> None:
    """The store endpoint's body is one event: refused unread. An envelope is read: a
    limit of its events must not lose its sessions (tests/lifecycle/test_ingest_limits.py)."""
    ok = limited.client.post(
        limited.url("store"), content=orjson.dumps(EVENT), headers=limited.auth()
    )
    assert ok.status_code == 200
    r = limited.client.post(limited.url("store"), content=b"\xff", headers=limited.auth())
    assert r.status_code == 429, r.text


def test_envelope_dsn_alone_still_authenticates_and_must_name_the_project(ingest: Ingest) -> None:
    dsn = f"http://{ingest.key.public_key}@localhost/{ingest.project_id + 1}"
    body = envelope(({"type": "event"}, orjson.dumps(EVENT)), headers={"dsn": dsn})
    r = ingest.client.post(ingest.url("envelope"), content=body)
    assert r.status_code == 400
    assert "project id mismatch" in r.json()["detail"]


def test_a_large_body_is_decompressed_off_the_event_loop_and_stored(ingest: Ingest) -> None:
    items = [
        ({"type": "event"}, orjson.dumps({**EVENT, "event_id": f"{n:032x}", "extra": {"n": n}}))
        for n in range(80)
    ]
    body = envelope(*items)
    assert len(body) > OFF_LOOP_BODY_BYTES  # sent without compression: the body is large
    r = ingest.client.post(ingest.url("envelope"), content=body, headers=ingest.auth())
    assert r.status_code == 200, r.text
    assert len(stored_event_ids(ingest)) == 80


def test_a_request_waiting_for_its_fsync_holds_its_records_encoded_alone(
    ingest: Ingest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the spool's fsync is awaited, the request holds no decoded record (the event
    inflated, the body as sent): only the bytes the spool writes. Hundreds of requests
    wait at once when the disk stalls."""
    gate = FsyncGate()
    body = envelope(({"type": "event"}, orjson.dumps(EVENT)), headers={"event_id": "d" * 32})
    monkeypatch.setattr(os, "fsync", gate)
    with ThreadPoolExecutor(1) as pool:
        answer = pool.submit(
            ingest.client.post,
            ingest.url("envelope"),
            content=gzip.compress(body),
            headers={**ingest.auth(), "Content-Encoding": "gzip"},
        )
        try:
            assert gate.entered.wait(10)
            alive = [o for o in gc.get_objects() if isinstance(o, Accepted | SpoolRecord)]
        finally:
            gate.release()
        assert answer.result(10).status_code == 200
    ours = [o for o in alive if o.event_id == "d" * 32]
    assert [type(o) for o in ours] == [Accepted]  # the request, waiting: no record of it
    assert stored_event_ids(ingest) == ["d" * 32]
