"""Client key lookups for ingestion, cached so the hot path rarely hits the database.

The cache is also what keeps ingestion going while the database is down: the spool is
the outage buffer (docs/deployment.md), so a key the database confirmed before keeps
working from its last known state for up to ``stale_seconds``. Only a key never seen
(or not seen for that long) is refused with 503 then.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.exc import SQLAlchemyError

from tracebox.errors import Unavailable
from tracebox.ingest.lookups import Lookups, refresh_at
from tracebox.logs import LoggedCondition, first_line
from tracebox.models import IngestKey
from tracebox.store import Database, client_keys

MAX_CACHED_KEYS = 10_000  # per kind (known, unknown): bounds memory when keys are sprayed

log = logging.getLogger("tracebox.ingest")


@dataclass
class _Entry:
    key: IngestKey | None  # None: the database said there is no such key
    confirmed_at: float  # when the database last answered for this key
    expires_at: float  # when requests wait for the database's answer again
    refresh_at: float  # when a request starts a lookup in the background (``lookups``)


class KeyCache:
    """Maps public keys to ``IngestKey`` (or None when unknown), asking the database again
    every ``ttl`` seconds: for a key in use, in the background before the answer expires
    (``lookups``), so that requests do not wait for it.

    While the database answers, a deleted or deactivated key stops working within ``ttl``
    seconds on every node (the API's delete path also calls ``forget``, so the node that
    served it reacts at once). While it does not, entries are used as last confirmed, for
    at most ``stale_seconds`` after that confirmation, and the database is asked again
    once per ``ttl`` per key, by one request at a time.
    """

    def __init__(
        self,
        db: Database,
        *,
        ttl: float,
        stale_seconds: float,
        retry_after: int,
        reminder_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._db = db
        self._ttl = ttl
        self._stale_seconds = stale_seconds
        self._retry_after = retry_after
        self._clock = clock
        self._known: OrderedDict[str, _Entry] = OrderedDict()
        self._unknown: OrderedDict[str, _Entry] = OrderedDict()
        self._lookups: Lookups[str, IngestKey | None] = Lookups(
            lambda public_key: self._load(public_key), self._answered, clock
        )
        self._database_down = LoggedCondition(
            log, "database unavailable for client key lookups", reminder_seconds=reminder_seconds
        )

    async def get(self, public_key: str) -> IngestKey | None:
        now = self._clock()
        entry = self._known.get(public_key) or self._unknown.get(public_key)
        if entry is not None and entry.expires_at > now:
            if now >= entry.refresh_at:
                self._lookups.renew(public_key)  # meanwhile; nobody waits
            return entry.key
        try:
            return await self._lookups.wait(public_key)  # remembered by ``_answered``
        except SQLAlchemyError as e:
            return self._last_known(public_key, entry, now, e)

    def forget(self, public_key: str) -> None:
        """Drop what is known of the key, and the answer of a lookup of it running now."""
        self._lookups.forget(public_key)
        self._drop(public_key)

    def _drop(self, public_key: str) -> None:
        self._known.pop(public_key, None)
        self._unknown.pop(public_key, None)

    def _last_known(
        self, public_key: str, entry: _Entry | None, now: float, error: SQLAlchemyError
    ) -> IngestKey | None:
        """The database did not answer: the entry as last confirmed, if recent enough."""
        if entry is None or now - entry.confirmed_at > self._stale_seconds:
            self._database_down.occurred(
                f"refusing keys not confirmed in the last {self._stale_seconds:.0f} s "
                f"with 503; {len(self._known)} known keys keep working ({first_line(error)})"
            )
            raise Unavailable("the database is unavailable", self._retry_after) from error
        self._database_down.occurred(
            f"{len(self._known)} known keys keep working from their last known state "
            f"for up to {self._stale_seconds:.0f} s ({first_line(error)})"
        )
        # Ask again after ttl, not on every request, nor in the background meanwhile.
        entry.expires_at = entry.refresh_at = now + self._ttl
        return entry.key

    def _load(self, public_key: str) -> IngestKey | None:
        with self._db.read() as conn:
            return client_keys.find_for_ingest(conn, public_key)

    def _answered(self, public_key: str, key: IngestKey | None, started: float) -> None:
        self._database_down.cleared()
        entry = _Entry(key, started, started + self._ttl, refresh_at(started, self._ttl))
        self._remember(public_key, entry)

    def _remember(self, public_key: str, entry: _Entry) -> None:
        self._drop(public_key)
        entries = self._known if entry.key is not None else self._unknown
        entries[public_key] = entry
        if len(entries) > MAX_CACHED_KEYS:
            entries.popitem(last=False)  # the entry confirmed longest ago
