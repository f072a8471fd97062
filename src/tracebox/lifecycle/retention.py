"""Retention: events older than a project's maximum age, events beyond the first and
latest N of an error, and the instance's disk budget (oldest events first, across
projects). Reads find a batch, one short write transaction removes it."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sqlalchemy import Connection

from tracebox.config import Settings
from tracebox.lifecycle.batches import Batches
from tracebox.lifecycle.kinds import PRUNABLE_KINDS, Prunable
from tracebox.lifecycle.removal import Removal, account, count, remove_events
from tracebox.models import Project
from tracebox.store import Database, audit, projects, retention, sqlite_space
from tracebox.store.audit import Author
from tracebox.store.retention import RetentionSettings
from tracebox.store.usage import Outcome

log = logging.getLogger("tracebox.lifecycle")

DAY = 86400.0
ERRORS_PER_READ = 500
GATHER = 20_000  # ids read before removing them in id order
BUDGET_HEADROOM = 0.98  # remove down to 98% of the budget, so one pass does not flap


@dataclass(frozen=True)
class Policy:
    """A project's effective retention: its own settings, else the instance defaults."""

    max_age_days: int
    max_events_per_error: int

    @classmethod
    def of(cls, own: RetentionSettings, settings: Settings) -> Policy:
        return cls(
            own.max_age_days or settings.retention_days,
            own.max_events_per_error or settings.retention_events_per_error,
        )


def save(
    db: Database,
    project: Project,
    author: Author,
    *,
    max_age_days: int | None,
    max_events_per_error: int | None,
) -> RetentionSettings:
    """Save a project's own retention (None: the instance default), audited."""
    with db.write() as conn:
        saved = retention.put(
            conn, project.id, max_age_days=max_age_days, max_events_per_error=max_events_per_error
        )
        audit.record(
            conn,
            author,
            project_id=project.id,
            project_path=project.path,
            action="retention.update",
            target="retention settings",
            details={"max_age_days": max_age_days, "max_events_per_error": max_events_per_error},
        )
    return saved


def policies(db: Database, settings: Settings) -> dict[int, Policy]:
    """Every project's effective policy."""
    with db.read() as conn:
        own = retention.all_settings(conn)
        ids = [p.id for p in projects.list_all(conn)]
    return {p: Policy.of(own.get(p, RetentionSettings(p)), settings) for p in ids}


class Pruner:
    def __init__(
        self,
        db: Database,
        batches: Batches,
        stop: threading.Event,
        *,
        clock: Callable[[], float] = time.time,
        kinds: tuple[Prunable, ...] = PRUNABLE_KINDS,
        beat: Callable[[], None] = lambda: None,
    ) -> None:
        self.db = db
        self.batches = batches
        self.stop = stop
        self.clock = clock
        self.kinds = kinds
        self.beat = beat  # the supervisor's "alive", between reads of a long search

    # --- per project ------------------------------------------------------------------

    def by_age(self, project_id: int, policy: Policy) -> Removal:
        before = self.clock() - policy.max_age_days * DAY

        def expired(error_id: int, limit: int) -> list[int]:
            with self.db.read() as conn:
                return retention.events_before(conn, error_id, before, limit)

        def candidates(after: int) -> list[int]:
            with self.db.read() as conn:
                return retention.errors_seen_before(
                    conn, project_id, before, after_id=after, limit=ERRORS_PER_READ
                )

        removal = self._remove(self._ids(candidates, expired), "age")
        removal.add(self._kinds_by_age(project_id, before))
        return removal

    def by_count(self, project_id: int, policy: Policy) -> Removal:
        keep = policy.max_events_per_error

        def beyond(error_id: int, limit: int) -> list[int]:
            with self.db.read() as conn:
                return retention.events_beyond(conn, error_id, keep, limit)

        def candidates(after: int) -> list[int]:
            with self.db.read() as conn:
                return retention.errors_with_more_than(
                    conn, project_id, keep + 1, after_id=after, limit=ERRORS_PER_READ
                )

        return self._remove(self._ids(candidates, beyond), "count")

    def _kinds_by_age(self, project_id: int, before: float) -> Removal:
        total = Removal()
        for kind in self.kinds:
            if kind.older_than is None:
                continue
            while not self.stop.is_set():
                size = self.batches.size
                removed = self.batches.write(
                    lambda conn, k=kind, n=size: _expire_kind(conn, k, project_id, before, n),  # type: ignore[misc]
                    rows=size,
                )
                total.add(removed)
                if sum(removed.other.values()) < size:
                    break
        return total

    def _ids(
        self, candidates: Callable[[int], list[int]], of_error: Callable[[int, int], list[int]]
    ) -> Iterator[list[int]]:
        """Event ids from every candidate error, in lists of the current batch size, each
        list removed by the caller before the next is asked for. Up to ``GATHER`` ids are
        read first and removed in id order: the oldest events of many errors sit side by
        side in the table, so a batch empties a few whole pages instead of touching one
        page per event."""
        after = 0
        while not self.stop.is_set():
            gathered, resume = self._gather(candidates, of_error, after)
            if not gathered:
                return
            gathered.sort()
            done = 0
            while done < len(gathered) and not self.stop.is_set():
                size = self.batches.size
                yield gathered[done : done + size]
                done += size
            after = resume

    def _gather(
        self,
        candidates: Callable[[int], list[int]],
        of_error: Callable[[int, int], list[int]],
        after: int,
    ) -> tuple[list[int], int]:
        """Up to ``GATHER`` ids from the errors after ``after``; and where to go on from
        (an error that filled the gather is read again)."""
        gathered: list[int] = []
        while not self.stop.is_set() and (errors := candidates(after)):
            self.beat()
            for error_id in errors:
                room = GATHER - len(gathered)
                found = of_error(error_id, room)
                gathered += found
                if len(found) == room:
                    return gathered, error_id - 1
                after = error_id
        return gathered, after

    def _remove(self, found: Iterator[list[int]], reason: str) -> Removal:
        total = Removal()
        for ids in found:
            total.add(
                self.batches.write(
                    lambda conn, ids=ids: remove_events(  # type: ignore[misc]
                        conn, ids, outcome=Outcome.EXPIRED, reason=reason, kinds=self.kinds
                    ),
                    rows=len(ids),
                )
            )
        return total

    # --- the instance's disk budget ---------------------------------------------------

    def budget(self, max_bytes: int) -> Removal:
        """Remove the oldest data, across projects and kinds, until the database (plus
        files of kinds stored outside it) uses at most the budget."""
        total = Removal()
        used = self.used_bytes()
        if not max_bytes or used <= max_bytes:
            return total
        log.warning(
            "data uses %d bytes, over the budget of %d: removing the oldest events", used, max_bytes
        )
        target = int(max_bytes * BUDGET_HEADROOM)
        while used > target and not self.stop.is_set():
            removed = self._remove_oldest()
            if removed is None:
                log.warning("over the disk budget, but nothing left that retention removes")
                break
            total.add(removed)
            used = self.used_bytes()
        log.warning(
            "disk budget: removed %d events (%d bytes of payload); data now uses %d bytes",
            total.total,
            total.bytes,
            used,
        )
        return total

    def used_bytes(self) -> int:
        with self.db.read() as conn:
            return sqlite_space.space(conn).used_bytes

    def _remove_oldest(self) -> Removal | None:
        size = self.batches.size
        with self.db.read() as conn:
            events_time = retention.oldest_event_time(conn)
            kind, kind_time = self._oldest_kind(conn)
        if kind is not None and (events_time is None or (kind_time or 0) < events_time):
            return self.batches.write(lambda conn: _remove_oldest_kind(conn, kind, size), rows=size)
        if events_time is None:
            return None
        with self.db.read() as conn:
            ids = retention.oldest_events(conn, size)
        return self.batches.write(
            lambda conn: remove_events(
                conn, ids, outcome=Outcome.EXPIRED, reason="disk_budget", kinds=self.kinds
            ),
            rows=len(ids),
        )

    def _oldest_kind(self, conn: Connection) -> tuple[Prunable | None, float | None]:
        """The kind (other than events) whose oldest row is the instance's oldest."""
        found: tuple[Prunable | None, float | None] = (None, None)
        for kind in self.kinds:
            if kind.oldest is None or kind.remove_oldest is None:
                continue
            when = kind.oldest(conn)
            if when is not None and (found[1] is None or when < found[1]):
                found = (kind, when)
        return found


def _expire_kind(
    conn: Connection, kind: Prunable, project_id: int, before: float, limit: int
) -> Removal:
    assert kind.older_than is not None
    removed = kind.older_than(conn, project_id, before, limit)
    count(conn, Counter(removed.items), Outcome.EXPIRED, "age")
    return account(conn, kind, removed)


def _remove_oldest_kind(conn: Connection, kind: Prunable, limit: int) -> Removal:
    assert kind.remove_oldest is not None
    removed = kind.remove_oldest(conn, limit)
    count(conn, Counter(removed.items), Outcome.EXPIRED, "disk_budget")
    return account(conn, kind, removed)
