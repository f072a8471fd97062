"""Logging for every process: one format, and lasting conditions logged as episodes.

An outage makes the same failure happen many times a second: on every request, on every
retry of the digest. Logging each one buries everything else (issue 9 counted 4,036
warnings in 22 s), and logging none leaves the operator blind. A ``LoggedCondition``
writes one line when the condition starts, a reminder with counts at most every
``reminder_seconds`` while it lasts, and one line when it ends.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

FORMAT = "%(levelname)s %(name)s: %(message)s"


def configure(level: str) -> None:
    """Log to stderr in one format: the CLI, ``serve`` and the background process."""
    logging.basicConfig(level=level.upper(), format=FORMAT)
    logging.getLogger("alembic").setLevel(logging.WARNING)


class LoggedCondition:
    """One condition, e.g. ``LoggedCondition(log, "database unavailable")``. Thread-safe.

    Call ``occurred(detail)`` each time it is seen (a refused request, a failed retry) and
    ``cleared()`` each time things work again; only transitions and reminders are logged.
    """

    def __init__(
        self,
        log: logging.Logger,
        what: str,
        *,
        reminder_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._log = log
        self._what = what
        self._reminder_seconds = reminder_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._since: float | None = None
        self._count = 0  # occurrences since the condition started
        self._reminded_at = 0.0
        self._count_at_reminder = 0

    @property
    def active(self) -> bool:
        return self._since is not None

    def occurred(self, detail: str = "", *, traceback: bool = False) -> None:
        """Count one occurrence; log the start, or a reminder when one is due.

        ``traceback``: attach the exception being handled to the start line (for failures
        that are not expected, so their cause is in the log once).
        """
        now = self._clock()
        with self._lock:
            self._count += 1
            if self._since is None:
                self._since = self._reminded_at = now
                self._count, self._count_at_reminder = 1, 0
                self._log.warning("%s: %s", self._what, detail, exc_info=traceback)
                return
            if now - self._reminded_at < self._reminder_seconds:
                return
            recent = self._count - self._count_at_reminder
            window = now - self._reminded_at
            self._reminded_at, self._count_at_reminder = now, self._count
            since = now - self._since
        self._log.warning(
            "%s for %.0f s (%d times since it started, %d in the last %.0f s): %s",
            self._what,
            since,
            self._count,
            recent,
            window,
            detail,
        )

    def cleared(self) -> None:
        """Log the end of the condition, if it was active."""
        if self._since is None:  # the common case, without taking the lock
            return
        with self._lock:
            if self._since is None:
                return
            lasted, count = self._clock() - self._since, self._count
            self._since = None
            self._count = 0
        self._log.warning("%s: over after %.0f s (%d times)", self._what, lasted, count)


def first_line(error: BaseException) -> str:
    """An exception's message in one line (drivers put whole server reports in theirs)."""
    text = str(error).strip()
    return text.splitlines()[0][:200] if text else type(error).__name__
