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

    def admit(self, key_id: int, events: int) -> int:
        """Count ``events`` for the key; return 0 if admitted, else seconds until it may retry."""
        if self.per_minute <= 0 or events <= 0:
            return 0
        now = self._clock()
        window = int(now // WINDOW_SECONDS)
        current, count = self._windows.get(key_id, (window, 0))
        if current != window:
            count = 0
        if count + events > self.per_minute:
            return max(1, math.ceil((window + 1) * WINDOW_SECONDS - now))
        self._windows[key_id] = (window, count + events)
        return 0
