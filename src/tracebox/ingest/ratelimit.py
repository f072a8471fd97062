"""Per-client-key event rate limit (events per minute), per worker process.

A fixed one-minute window per key: cheap, and exact enough for protecting the server.
Each worker process (and each node) counts on its own, as docs/deployment.md says.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

WINDOW_SECONDS = 60


class RateLimiter:
    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.time) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._windows: dict[int, tuple[int, int]] = {}  # key id -> (window index, count)

    def retry_after(self, key_id: int) -> int:
        """0 while the key may send another event now, else seconds until it may retry:
        lets ingest refuse a key over its limit before reading the request body."""
        return self._check(key_id, 1, count=False)

    def admit(self, key_id: int, events: int) -> int:
        """Count ``events`` for the key; return 0 if admitted, else seconds until it may retry."""
        return self._check(key_id, events, count=True)

    def _check(self, key_id: int, events: int, *, count: bool) -> int:
        if self.per_minute <= 0 or events <= 0:
            return 0
        now = self._clock()
        window = int(now // WINDOW_SECONDS)
        current, used = self._windows.get(key_id, (window, 0))
        if current != window:
            used = 0
        if used + events > self.per_minute:
            return max(1, math.ceil((window + 1) * WINDOW_SECONDS - now))
        if count:
            self._windows[key_id] = (window, used + events)
        return 0
