"""Every ingestion bound, at the limit and past it; bad input gets a clear 4xx, never a crash."""

from __future__ import annotations

import dataclasses
import gzip
import time
import zlib
from collections.abc import Iterator

import orjson
import pytest

from tests.ingest.conftest import Ingest, make_ingest
from tests.ingest.test_ingest_endpoints import EVENT, envelope
from tracebox.config import MIB, Settings
from tracebox.store import Database


def padded_event(size: int) -> bytes:
    """An event JSON of exactly ``size`` bytes."""
    base = orjson.dumps({**EVENT, "extra": {"pad": ""}})
    return orjson.dumps({**EVENT, "extra": {"pad": "x" * (size - len(base))}})


def assert_error(r: object, status: int) -> None:
    assert r.status_code == status, r.text  # type: ignore[attr-defined]
    assert r.json()["detail"]  # type: ignore[attr-defined]
    assert r.headers["x-sentry-error"]  # type: ignore[attr-defined]
    if status not in (429, 503):
        assert "retry-after" not in r.headers  # type: ignore[attr-defined]


def test_event_item_at_and_past_the_limit(ingest: Ingest) -> None:
    limit = ingest.settings.max_event_bytes
    assert limit == 1 * MIB
    ok = envelope(({"type": "event"}, padded_event(limit)))
    assert (
        ingest.client.post(ingest.url("envelope"), content=ok, headers=ingest.auth()).status_code
        == 200
    )
    big = envelope(({"type": "event"}, padded_event(limit + 1)))
    r = ingest.client.post(ingest.url("envelope"), content=big, headers=ingest.auth())
    assert_error(r, 413)


def test_store_body_at_and_past_the_decompressed_limit(ingest: Ingest) -> None:
    limit = ingest.settings.max_store_bytes
    ok = gzip.compress(padded_event(limit))
    headers = {**ingest.auth(), "Content-Encoding": "gzip"}
    assert ingest.client.post(ingest.url("store"), content=ok, headers=headers).status_code == 200
    big = gzip.compress(padded_event(limit + 1))
    assert_error(ingest.client.post(ingest.url("store"), content=big, headers=headers), 413)


def test_envelope_request_at_and_past_the_compressed_limit(ingest: Ingest) -> None:
    limit = ingest.settings.max_envelope_bytes
    assert limit == 20 * MIB
    head = envelope(({"type": "event"}, orjson.dumps(EVENT)))
    item_header = b'{"type":"attachment","length":%d}\n'
    pad = limit - len(head) - len(item_header % 0) - 1
    pad -= len(str(pad)) - 1
    body = head + (item_header % pad) + b"a" * pad + b"\n"
    assert len(body) == limit
    r = ingest.client.post(ingest.url("envelope"), content=body, headers=ingest.auth())
    assert r.status_code == 200, r.text
    r = ingest.client.post(ingest.url("envelope"), content=body + b"\n", headers=ingest.auth())
    assert_error(r, 413)


@pytest.mark.slow
def test_envelope_at_and_past_the_decompressed_limit(ingest: Ingest) -> None:
    limit = ingest.settings.max_envelope_decompressed_bytes
    assert limit == 100 * MIB
    head = envelope(({"type": "event"}, orjson.dumps(EVENT)))
    item_header = b'{"type":"attachment","length":%d}\n' % (limit - len(head) - 37)
    pad = limit - len(head) - len(item_header) - 1
    body = head + b'{"type":"attachment","length":%d}\n' % pad
    body += b"\0" * (limit - len(body) - 1) + b"\n"
    assert len(body) == limit
    headers = {**ingest.auth(), "Content-Encoding": "gzip"}
    r = ingest.client.post(ingest.url("envelope"), content=gzip.compress(body, 1), headers=headers)
    assert r.status_code == 200, r.text
    r = ingest.client.post(
        ingest.url("envelope"), content=gzip.compress(body + b"\n", 1), headers=headers
    )
    assert_error(r, 413)


def test_gzip_bomb_is_refused(ingest: Ingest) -> None:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
    chunk = b"\0" * MIB
    bomb = b"".join(compressor.compress(chunk) for _ in range(1024)) + compressor.flush()
    assert len(bomb) < 2 * MIB  # 1 GiB of zeros
    headers = {**ingest.auth(), "Content-Encoding": "gzip"}
    assert_error(ingest.client.post(ingest.url("envelope"), content=bomb, headers=headers), 413)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        b'{"event_id": "x"}\n{"type": "event", "length": 100}\n{}',
        b"[]\n",
        b'{}\n{"no_type": 1}\n{}',
    ],
)
def test_malformed_envelopes_get_400(ingest: Ingest, body: bytes) -> None:
    r = ingest.client.post(ingest.url("envelope"), content=body, headers=ingest.auth())
    assert_error(r, 400)


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b"\xff\xfe"])
def test_malformed_store_bodies_get_400(ingest: Ingest, body: bytes) -> None:
    assert_error(ingest.client.post(ingest.url("store"), content=body, headers=ingest.auth()), 400)


def test_invalid_event_json_inside_an_envelope_gets_400(ingest: Ingest) -> None:
    body = envelope(({"type": "event"}, b"{broken"))
    assert_error(
        ingest.client.post(ingest.url("envelope"), content=body, headers=ingest.auth()), 400
    )


def test_bad_encoding_gets_400(ingest: Ingest) -> None:
    headers = {**ingest.auth(), "Content-Encoding": "gzip"}
    r = ingest.client.post(ingest.url("store"), content=b"definitely not gzip", headers=headers)
    assert_error(r, 400)


def test_rejected_input_leaves_accepted_data_intact(ingest: Ingest) -> None:
    ok = ingest.client.post(ingest.url("store"), content=orjson.dumps(EVENT), headers=ingest.auth())
    assert ok.status_code == 200
    for bad in (b"{", b"[]", b"\0" * 10):
        ingest.client.post(ingest.url("envelope"), content=bad, headers=ingest.auth())
    assert ingest.counts()["events"] == 1


@pytest.fixture
def limited(settings: Settings, db: Database) -> Iterator[Ingest]:
    # The limit counts per minute of the clock: one that stands still, so the minute
    # cannot end between the requests that fill it and the one it refuses.
    limited = dataclasses.replace(settings, rate_limit_events_per_minute=3)
    yield from make_ingest(limited, db, limits_at=time.time())


def test_rate_limit_at_and_past_the_limit(limited: Ingest) -> None:
    for n in range(3):
        body = orjson.dumps({**EVENT, "event_id": f"{n:032x}"})
        r = limited.client.post(limited.url("store"), content=body, headers=limited.auth())
        assert r.status_code == 200
        assert "retry-after" not in r.headers
    r = limited.client.post(
        limited.url("store"), content=orjson.dumps(EVENT), headers=limited.auth()
    )
    assert_error(r, 429)
    retry = int(r.headers["retry-after"])
    assert 1 <= retry <= 60
    assert r.headers["x-sentry-rate-limits"] == f"{retry}:error;default:key"
    assert limited.counts()["events"] == 3


@pytest.fixture
def tiny_spool(settings: Settings, db: Database) -> Iterator[Ingest]:
    yield from make_ingest(dataclasses.replace(settings, spool_max_bytes=4096), db)


def test_spool_full_answers_503_and_keeps_what_was_acknowledged(tiny_spool: Ingest) -> None:
    ing = tiny_spool
    statuses = []
    for n in range(20):
        body = orjson.dumps({**EVENT, "event_id": f"{n:032x}"})
        r = ing.client.post(ing.url("store"), content=body, headers=ing.auth())
        statuses.append(r.status_code)
        if r.status_code == 503:
            assert_error(r, 503)
            assert int(r.headers["retry-after"]) > 0
            break
    assert statuses[0] == 200 and statuses[-1] == 503
    accepted = statuses.count(200)
    assert ing.counts()["events"] == accepted  # every acknowledged event was kept


def test_database_down_answers_503(tmp_path: object, free_closed_port: int) -> None:
    from starlette.testclient import TestClient

    from tracebox.app import create_app

    settings = Settings(
        data_dir=tmp_path / "data",  # type: ignore[operator]
        database_url=f"postgresql://nobody@127.0.0.1:{free_closed_port}/none",
    )
    with TestClient(create_app(settings)) as client:
        r = client.post(
            "/api/1/store/",
            content=orjson.dumps(EVENT),
            headers={"X-Sentry-Auth": f"Sentry sentry_key={'a' * 32}"},
        )
        assert_error(r, 503)
        assert int(r.headers["retry-after"]) == settings.retry_after_seconds
        assert client.get("/-/health").status_code == 503


@pytest.fixture
def free_closed_port() -> int:
    from tests.helpers import free_port

    return free_port()  # nothing listens there
