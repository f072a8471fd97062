"""Quotas at the ingest endpoints: per data category, with Sentry's headers; an envelope
limited for events keeps its sessions; refusals counted per project and reason."""

from __future__ import annotations

import time
from collections.abc import Iterator

import orjson
import pytest

from tests.ingest.conftest import Ingest, make_ingest
from tests.ingest.test_ingest_endpoints import envelope, event
from tracebox.config import Settings
from tracebox.ingest.counters import SharedCounters
from tracebox.lifecycle import report
from tracebox.lifecycle.cleanup import CleanupLoop
from tracebox.store import Database, client_keys, quotas
from tracebox.store.quotas import Quota, SpikeProtection


def session(n: int) -> bytes:
    return orjson.dumps(
        {"sid": f"{n:032x}", "status": "exited", "started": time.time() - 60,
         "timestamp": time.time(), "attrs": {"release": "web@1.0"}}
    )  # fmt: skip


@pytest.fixture
def ingest(settings: Settings, db: Database) -> Iterator[Ingest]:
    # Quotas count per minute, hour or UTC day of the clock: one that stands still, so no
    # window ends between the requests that fill a quota and the ones it refuses.
    yield from make_ingest(settings, db, limits_at=time.time())


def limit(ingest: Ingest, *limits: Quota) -> None:
    with ingest.db.write() as conn:
        quotas.put(conn, ingest.project_id, limits, SpikeProtection())


def post_envelope(ingest: Ingest, n: int, *, with_session: bool = True) -> object:
    items = [({"type": "event"}, orjson.dumps(event(n)))]
    if with_session:
        items.append(({"type": "session"}, session(n)))
    return ingest.client.post(
        ingest.url("envelope"), content=envelope(*items), headers=ingest.auth()
    )


def test_an_envelope_limited_for_events_keeps_its_sessions(ingest: Ingest) -> None:
    limit(ingest, Quota("error", 3600, 1))
    first = post_envelope(ingest, 1)
    assert first.status_code == 200 and "x-sentry-rate-limits" not in first.headers

    second = post_envelope(ingest, 2)

    assert second.status_code == 200  # the session was accepted: not a 429
    assert "retry-after" not in second.headers  # never on a non-429 (SDKs honour it anyway)
    retry, categories, scope = second.headers["x-sentry-rate-limits"].split(":")
    assert (categories, scope) == ("error;default", "project") and 0 < int(retry) <= 3600
    counts = ingest.counts()
    assert counts["events"] == 1 and counts["sessions"] == 2


def test_a_request_with_nothing_left_is_refused_with_429_and_the_category(ingest: Ingest) -> None:
    limit(ingest, Quota("error", 60, 1))
    assert (
        ingest.client.post(
            ingest.url("store"), content=orjson.dumps(event(1)), headers=ingest.auth()
        ).status_code
        == 200
    )

    for r in (
        post_envelope(ingest, 2, with_session=False),
        ingest.client.post(
            ingest.url("store"), content=orjson.dumps(event(3)), headers=ingest.auth()
        ),
    ):
        assert r.status_code == 429
        retry = int(r.headers["retry-after"])
        assert 1 <= retry <= 60
        assert r.headers["x-sentry-rate-limits"] == f"{retry}:error;default:project"
        assert "error" in r.headers["x-sentry-error"]
    assert ingest.counts()["events"] == 1


def test_sessions_limited_themselves_are_refused_and_events_go_through(ingest: Ingest) -> None:
    limit(ingest, Quota("session", 86400, 0))
    r = post_envelope(ingest, 1)
    assert r.status_code == 200
    assert r.headers["x-sentry-rate-limits"].split(":")[1:] == ["session", "project"]
    counts = ingest.counts()
    assert counts["events"] == 1 and counts["sessions"] == 0


def test_a_client_keys_quota_leaves_the_projects_other_keys_alone(ingest: Ingest) -> None:
    with ingest.db.write() as conn:
        other = client_keys.create(conn, ingest.project_id)
    limit(ingest, Quota("error", 3600, 1, key_id=ingest.key.id))
    body = envelope(({"type": "event"}, orjson.dumps(event(1))))
    assert (
        ingest.client.post(ingest.url("envelope"), content=body, headers=ingest.auth()).status_code
        == 200
    )
    body = envelope(({"type": "event"}, orjson.dumps(event(2))))
    refused = ingest.client.post(ingest.url("envelope"), content=body, headers=ingest.auth())
    assert refused.status_code == 429 and refused.headers["x-sentry-rate-limits"].endswith(":key")
    body = envelope(({"type": "event"}, orjson.dumps(event(3))))
    assert (
        ingest.client.post(
            ingest.url("envelope"), content=body, headers=ingest.auth(other)
        ).status_code
        == 200
    )


def test_refusals_are_counted_per_reason_on_the_usage_view(ingest: Ingest) -> None:
    limit(ingest, Quota("error", 3600, 1))
    big = ingest.client.post(
        ingest.url("store"),
        content=b"x" * (ingest.settings.max_store_compressed_bytes + 1),
        headers=ingest.auth(),
    )
    assert big.status_code == 413  # too large (the quota still has room: the body was read)
    post_envelope(ingest, 1, with_session=False)
    post_envelope(ingest, 2, with_session=False)  # quota
    bad = ingest.client.post(ingest.url("envelope"), content=b"{}\n{oops", headers=ingest.auth())
    assert bad.status_code == 400  # invalid
    stranger = {"X-Sentry-Auth": f"Sentry sentry_key={'f' * 32}"}
    ingest.client.post(ingest.url("envelope"), content=b"{oops", headers=stranger)  # not counted

    cleaner = CleanupLoop(
        ingest.db, ingest.settings, counters=SharedCounters.in_data_dir(ingest.settings.data_dir)
    )
    cleaner.flush_refusals()
    ingest.digest()

    outcomes = report.project(ingest.db, ingest.settings, ingest.project_id).outcomes
    assert outcomes.refused == {"quota": 1, "invalid": 1, "too_large": 1}
    assert outcomes.accepted == 1 and outcomes.received == 4
