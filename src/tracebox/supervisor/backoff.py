"""How long to wait before restarting something that crashed."""

from __future__ import annotations

FIRST_S = 1.0  # the first restart comes after a second: a one-off crash costs little
MAX_S = 60.0  # a crash loop retries once a minute, not in a tight loop
RESET_AFTER_S = 60.0  # a run this long was healthy: the next crash starts over at FIRST_S


class Backoff:
    """1, 2, 4, ... up to 60 s between restarts; back to 1 s after a run of 60 s."""

    def __init__(self) -> None:
        self._next = FIRST_S

    def delay(self, ran_for: float) -> float:
        """The wait before the next start, given how long the last run lasted."""
        if ran_for >= RESET_AFTER_S:
            self._next = FIRST_S
        delay = self._next
        self._next = min(MAX_S, self._next * 2)
        return delay
