"""Client key lookups for ingestion, cached briefly so the hot path rarely hits the database."""

from __future__ import annotations

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

    async def get(self, public_key: str) -> IngestKey | None:
        now = self._clock()
        hit = self._entries.get(public_key)
        if hit is not None and hit[0] > now:
            return hit[1]
        try:
            key = await run_in_threadpool(self._load, public_key)
        except DBAPIError as e:
            # Known keys keep working from the cache while the database is down.
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
