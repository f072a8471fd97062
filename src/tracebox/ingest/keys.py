"""Client key lookups for ingestion, cached briefly so the hot path rarely hits the database."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from sqlalchemy.exc import DBAPIError
from starlette.concurrency import run_in_threadpool

from tracebox.errors import Unavailable
from tracebox.models import IngestKey
from tracebox.store import Database, client_keys

MAX_CACHED_KEYS = 10_000  # bound memory when someone sprays random keys


class KeyCache:
    """Maps public keys to ``IngestKey`` (or None when unknown) for ``ttl`` seconds.

    A deleted or deactivated key stops working within ``ttl`` seconds on every node; the
    API's delete path also calls ``forget`` so the node that served it reacts at once.
    """

    def __init__(
        self,
        db: Database,
        *,
        ttl: float,
        retry_after: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._db = db
        self._ttl = ttl
        self._retry_after = retry_after
        self._clock = clock
        self._entries: dict[str, tuple[float, IngestKey | None]] = {}
        self._loading: dict[str, asyncio.Future[IngestKey | None]] = {}

    async def get(self, public_key: str) -> IngestKey | None:
        hit = self._entries.get(public_key)
        if hit is not None and hit[0] > self._clock():
            return hit[1]
        # One lookup per key at a time: when an entry expires under load, the requests
        # that find it expired wait for one query instead of each running their own.
        loading = self._loading.get(public_key)
        if loading is None:
            loading = asyncio.ensure_future(self._refresh(public_key))
            self._loading[public_key] = loading
            loading.add_done_callback(lambda _: self._loading.pop(public_key, None))
        return await asyncio.shield(loading)

    async def _refresh(self, public_key: str) -> IngestKey | None:
        now = self._clock()
        try:
            key = await run_in_threadpool(self._load, public_key)
        except DBAPIError as e:
            raise Unavailable("the database is unavailable", self._retry_after) from e
        if len(self._entries) >= MAX_CACHED_KEYS:
            self._entries.clear()
        self._entries[public_key] = (now + self._ttl, key)
        return key

    def _load(self, public_key: str) -> IngestKey | None:
        with self._db.read() as conn:
            return client_keys.find_for_ingest(conn, public_key)

    def forget(self, public_key: str) -> None:
        self._entries.pop(public_key, None)
