"""The client key cache: one database lookup per key at a time, however many requests."""

from __future__ import annotations

import asyncio
import threading

from tracebox.ingest.keys import KeyCache
from tracebox.models import IngestKey
from tracebox.store import Database, client_keys, projects


def test_concurrent_requests_for_an_expired_key_share_one_lookup(db: Database) -> None:
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
        projects.put_settings(conn, project.id, active=True, integrated=True)
        key = client_keys.create(conn, project.id)
    now = [0.0]
    cache = KeyCache(db, ttl=2.0, retry_after=30, clock=lambda: now[0])
    lookups: list[str] = []
    release = threading.Event()
    load = cache._load

    def slow_load(public_key: str) -> IngestKey | None:
        lookups.append(public_key)
        release.wait(10)  # every request arrives while the lookup runs
        return load(public_key)

    cache._load = slow_load  # type: ignore[method-assign]

    async def requests() -> list[IngestKey | None]:
        pending = [asyncio.ensure_future(cache.get(key.public_key)) for _ in range(20)]
        await asyncio.sleep(0.05)
        release.set()
        return await asyncio.gather(*pending)

    found = asyncio.run(requests())
    assert len(lookups) == 1
    assert {k.key_id if k else None for k in found} == {key.id}
    now[0] = 3.0  # expired: the next request looks it up again
    release.clear()
    release.set()
    asyncio.run(cache.get(key.public_key))
    assert len(lookups) == 2
