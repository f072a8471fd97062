"""What every request to a linked Sentry server shares: the token cipher, the client's
bounds, and a short cache of list and details answers (per node; a cache, never the
source of truth, so several nodes need not share it)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracebox.config import Settings
from tracebox.sentry_client import ClientOptions
from tracebox.tracking.crypto import TokenCipher
from tracebox.tracking.instance_secret import instance_secret

if TYPE_CHECKING:  # the client and httpx are loaded on its first request (~4 MB)
    import httpx

    from tracebox.sentry_client import SentryClient, SentryResponse

MAX_CACHE_ENTRIES = 500


class TtlCache:
    """A small thread-safe LRU of answers that expire after ``ttl`` seconds."""

    def __init__(self, ttl: float, max_entries: int = MAX_CACHE_ENTRIES) -> None:
        self.ttl = ttl
        self._max = max_entries
        self._items: OrderedDict[tuple[Any, ...], tuple[float, SentryResponse]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> SentryResponse | None:
        with self._lock:
            found = self._items.get(key)
            if found is None or found[0] < time.monotonic():
                self._items.pop(key, None)
                return None
            self._items.move_to_end(key)
            return found[1]

    def put(self, key: tuple[Any, ...], value: SentryResponse) -> None:
        if self.ttl <= 0:
            return
        with self._lock:
            self._items[key] = (time.monotonic() + self.ttl, value)
            self._items.move_to_end(key)
            while len(self._items) > self._max:
                self._items.popitem(last=False)

    def forget(self, scope: Any) -> None:
        """Drop every answer cached for ``scope`` (the first element of the key)."""
        with self._lock:
            for key in [k for k in self._items if k[0] == scope]:
                del self._items[key]


@dataclass
class ExternalBackend:
    cipher: TokenCipher
    options: ClientOptions
    cache: TtlCache
    transport: httpx.BaseTransport | None = field(default=None, repr=False)  # tests only

    @classmethod
    def from_settings(cls, settings: Settings) -> ExternalBackend:
        options = ClientOptions(
            connect_timeout_s=settings.external_connect_timeout_seconds,
            read_timeout_s=settings.external_read_timeout_seconds,
            max_response_bytes=settings.external_max_response_bytes,
            allow_local_network=settings.external_allow_local_network,
        )
        return cls(
            TokenCipher(instance_secret(settings)),
            options,
            TtlCache(settings.external_cache_seconds),
        )

    def client(self, host: str, token: str) -> SentryClient:
        from tracebox.sentry_client import SentryClient

        return SentryClient(host, token, self.options, transport=self.transport)
