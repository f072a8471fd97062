"""Throttling repeated failed sign-ins, per username and per client address.

Counted in memory, per web worker process (like ingestion's rate limits): with N workers
an attacker gets at most N times the allowance; a lockout is a delay, never a correctness
matter, so it needs no shared state.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

MAX_TRACKED_KEYS = 10_000  # bounds memory under a spray of usernames or addresses


class SigninThrottle:
    def __init__(
        self,
        *,
        max_per_user: int,
        max_per_address: int,
        window_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limits = {"user": max_per_user, "addr": max_per_address}
        self._window = window_seconds
        self._clock = clock
        self._failures: dict[tuple[str, str], deque[float]] = {}

    def retry_after(self, username: str, address: str) -> int:
        """Seconds until a sign-in may be tried again; 0 when it may be tried now."""
        now = self._clock()
        waits = [0.0]
        for key in self._keys(username, address):
            times = self._recent(key, now)
            if len(times) >= self._limits[key[0]]:
                waits.append(times[0] + self._window - now)
        return int(max(waits) + 0.999)

    def failed(self, username: str, address: str) -> None:
        now = self._clock()
        if len(self._failures) >= MAX_TRACKED_KEYS:
            self._forget_stale(now)
        for key in self._keys(username, address):
            self._failures.setdefault(key, deque()).append(now)

    def succeeded(self, username: str) -> None:
        self._failures.pop(("user", username.lower()), None)

    def _keys(self, username: str, address: str) -> list[tuple[str, str]]:
        return [("user", username.lower()), ("addr", address)]

    def _recent(self, key: tuple[str, str], now: float) -> deque[float]:
        times = self._failures.get(key, deque())
        while times and times[0] <= now - self._window:
            times.popleft()
        return times

    def _forget_stale(self, now: float) -> None:
        for key in list(self._failures):
            if not self._recent(key, now):
                del self._failures[key]
        while len(self._failures) >= MAX_TRACKED_KEYS:  # still full: drop the oldest keys
            self._failures.pop(next(iter(self._failures)))
