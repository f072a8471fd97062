"""The client key cache: known keys keep working while the database is down (issue 9)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator

import pytest

from tests.helpers import free_port
from tracebox.errors import Unavailable
from tracebox.ingest.keys import KeyCache
from tracebox.models import ClientKey, IngestKey
from tracebox.store import Database, client_keys, projects

TTL = 2.0
STALE = 3600.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def key(db: Database) -> ClientKey:
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
        projects.put_settings(conn, project.id, active=True, integrated=True)
        return client_keys.create(conn, project.id)


@pytest.fixture
def down() -> Iterator[Database]:
    """A database nobody answers for: connections are refused, as when PostgreSQL is stopped."""
    database = Database(f"postgresql+psycopg://nobody@127.0.0.1:{free_port()}/none")
    yield database
    database.dispose()


def make_cache(db: Database, clock: Clock) -> KeyCache:
    return KeyCache(db, ttl=TTL, stale_seconds=STALE, retry_after=30, clock=clock)


def test_a_known_key_keeps_working_while_the_database_is_down(
    db: Database, down: Database, key: ClientKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    cache = make_cache(db, clock)
    found = asyncio.run(cache.get(key.public_key))
    assert found is not None and found.key_active
    assert asyncio.run(cache.get("f" * 32)) is None  # unknown, and confirmed unknown

    monkeypatch.setattr(cache, "_db", down)
    for step in (TTL + 1, 60, 600, STALE - 700):  # well past the TTL, within the stale bound
        clock.now += step
        assert asyncio.run(cache.get(key.public_key)) == found
    assert asyncio.run(cache.get("f" * 32)) is None  # still known to be unknown
    with pytest.raises(Unavailable) as refused:
        asyncio.run(cache.get("e" * 32))  # never seen: cannot tell, so 503
    assert (refused.value.status_code, refused.value.retry_after) == (503, 30)

    clock.now += 200  # now more than STALE after the database last confirmed the key
    with pytest.raises(Unavailable):
        asyncio.run(cache.get(key.public_key))


def test_a_revoked_key_stops_within_the_ttl_while_the_database_answers(
    db: Database, key: ClientKey
) -> None:
    clock = Clock()
    cache = make_cache(db, clock)
    assert asyncio.run(cache.get(key.public_key)) is not None
    with db.write() as conn:  # revoked on another node: this one's cache is not told
        client_keys.delete(conn, key.project_id, key.id)
    clock.now += TTL / 2
    assert asyncio.run(cache.get(key.public_key)) is not None
    clock.now += TTL / 2 + 0.01
    assert asyncio.run(cache.get(key.public_key)) is None


def test_concurrent_misses_share_one_lookup(
    db: Database, key: ClientKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = make_cache(db, Clock())
    lookups = []
    load = cache._load

    def counting(public_key: str) -> object:
        lookups.append(public_key)
        return load(public_key)

    monkeypatch.setattr(cache, "_load", counting)

    async def many() -> list[object]:
        return await asyncio.gather(*(cache.get(key.public_key) for _ in range(20)))

    results = asyncio.run(many())
    assert len(lookups) == 1
    assert len({id(r) for r in results}) == 1


class Blocked:
    """The cache's lookups, made to wait for ``release``; ``asked``: the keys looked up."""

    def __init__(self, cache: KeyCache, monkeypatch: pytest.MonkeyPatch) -> None:
        self.load: Callable[[str], object] = cache._load
        self.asked: list[str] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        monkeypatch.setattr(cache, "_load", self)

    def __call__(self, public_key: str) -> object:
        self.asked.append(public_key)
        self.entered.set()
        assert self.release.wait(30)
        return self.load(public_key)


async def renewal_under_way(
    cache: KeyCache, clock: Clock, public_key: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[Blocked, asyncio.Future[IngestKey | None]]:
    """A key answered once, then asked for past half its ttl: that request is answered
    from the cache at once, while the database does not answer at all; the renewal it
    started is returned, under way and blocked until ``release``."""
    assert await cache.get(public_key) is not None
    lookups = Blocked(cache, monkeypatch)
    clock.now += TTL * 0.6
    assert await asyncio.wait_for(cache.get(public_key), 5) is not None
    assert await asyncio.to_thread(lookups.entered.wait, 30)
    return lookups, cache._lookups.start(public_key)  # the one running: not a new one


def test_a_key_in_use_is_renewed_before_it_expires_and_no_request_waits(
    db: Database, key: ClientKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past half its ttl a cached key is still answered at once, while a lookup in the
    background renews it: requests wait for the database only for a key with no answer."""
    clock = Clock()
    cache = make_cache(db, clock)

    async def scenario() -> None:
        lookups, renewal = await renewal_under_way(cache, clock, key.public_key, monkeypatch)
        with db.write() as conn:  # revoked on another node meanwhile
            client_keys.delete(conn, key.project_id, key.id)
        lookups.release.set()
        await renewal
        # The renewal's answer is used at once, before the first answer would expire.
        assert await cache.get(key.public_key) is None
        assert lookups.asked == [key.public_key]

    asyncio.run(scenario())


def test_a_renewal_running_when_the_key_is_forgotten_does_not_bring_it_back(
    db: Database, key: ClientKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    cache = make_cache(db, clock)

    async def scenario() -> None:
        lookups, renewal = await renewal_under_way(cache, clock, key.public_key, monkeypatch)
        cache.forget(key.public_key)  # deleted through the API on this node
        lookups.release.set()
        await renewal
        assert await cache.get(key.public_key) is not None  # asked again, not remembered
        assert lookups.asked == [key.public_key, key.public_key]

    asyncio.run(scenario())


def test_a_renewal_that_fails_is_not_tried_again_before_the_answer_expires(
    db: Database, down: Database, key: ClientKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An outage costs one background lookup per answer, not one per request."""
    clock = Clock()
    cache = make_cache(db, clock)

    async def scenario() -> None:
        found = await cache.get(key.public_key)
        monkeypatch.setattr(cache, "_db", down)
        clock.now += TTL * 0.6
        assert await cache.get(key.public_key) == found
        await asyncio.wait([cache._lookups.start(key.public_key)])  # the renewal: failed
        clock.now += TTL * 0.2
        assert await cache.get(key.public_key) == found
        assert key.public_key not in cache._lookups._running

    asyncio.run(scenario())
