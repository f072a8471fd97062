"""Database lookups of the request path (client keys, a project's limits), one at a time
per key, answered into a cache before it expires.

A cached answer is trusted for ``ttl`` seconds. Once ``REFRESH_SHARE`` of that has passed,
the next request still uses it, and starts a lookup in the background that renews it.
So a key in use is renewed before it expires, and requests wait on the database only
for a key they have no answer for. Before, every ``ttl`` the requests of a key that
arrived meanwhile queued behind its lookups: with PostgreSQL busy on the same machine,
20-56 ms every 2 s for dozens of requests (issue 10's p99; docs/performance.md, "Where
the p99 goes").
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from starlette.concurrency import run_in_threadpool

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

# An answer older than this share of its ttl is renewed in the background on its next use.
REFRESH_SHARE = 0.5


class Lookups(Generic[K, V]):
    """``load(key)`` run in the thread pool, one at a time per key: whoever asks while one
    runs shares its answer. A successful answer goes to ``answered(key, value, started)``
    (``started``: ``clock()`` when the lookup began, as the answer can be no newer),
    unless the key was ``forget``-ed meanwhile: the answer may predate what made the
    caller forget it (a client key deleted through the API). ``renew`` starts a lookup
    nobody waits for, once per answer: one that fails (the database went away) is not
    started again by every later request."""

    def __init__(
        self,
        load: Callable[[K], V],
        answered: Callable[[K, V, float], None],
        clock: Callable[[], float],
    ) -> None:
        self._load = load
        self._answered = answered
        self._clock = clock
        self._running: dict[K, asyncio.Future[V]] = {}
        self._renewed: set[K] = set()  # renewals started since the key's last answer

    async def wait(self, key: K) -> V:
        """The answer of the lookup of ``key`` running now, or of a new one."""
        # shield: a request that goes away does not cancel the lookup others wait for.
        return await asyncio.shield(self.start(key))

    def renew(self, key: K) -> None:
        """Start a lookup of ``key`` in the background, unless one was since its last answer."""
        if key not in self._renewed:
            self._renewed.add(key)
            self.start(key)

    def start(self, key: K) -> asyncio.Future[V]:
        """Start a lookup of ``key`` unless one runs; either way, return it (a caller that
        does not wait for it loses nothing: a failure is seen by the next one that does)."""
        running = self._running.get(key)
        if running is not None:
            return running
        started = self._clock()
        running = asyncio.ensure_future(run_in_threadpool(self._load, key))
        self._running[key] = running

        def done(finished: asyncio.Future[V]) -> None:
            # exception() also marks a failure seen: nobody may be waiting for it.
            failed = finished.cancelled() or finished.exception() is not None
            if self._running.get(key) is not finished:
                return  # forgotten meanwhile
            del self._running[key]
            if not failed:
                self._renewed.discard(key)
                self._answered(key, finished.result(), started)

        running.add_done_callback(done)
        return running

    def forget(self, key: K) -> None:
        """The lookup of ``key`` running now, if any, answers its waiters only."""
        self._running.pop(key, None)
        self._renewed.discard(key)


def refresh_at(started: float, ttl: float) -> float:
    """When an answer looked up at ``started`` is due for renewal in the background."""
    return started + ttl * REFRESH_SHARE
