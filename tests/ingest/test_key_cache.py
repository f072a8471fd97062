"""The client key cache: known keys keep working while the database is down (issue 9)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tests.helpers import free_port
from tracebox.errors import Unavailable
from tracebox.ingest.keys import KeyCache
from tracebox.models import ClientKey
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
