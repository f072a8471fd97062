"""Removing events in the caller's transaction, with everything that belongs to them,
and the usage counters that say so. Errors and their counts are left as they are."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Connection

from tracebox.lifecycle.kinds import PRUNABLE_KINDS, Prunable, Removed
from tracebox.store import retention, usage
from tracebox.store.usage import EVENTS, Outcome

CATEGORY = "error"  # the Sentry data category of stored events


@dataclass
class Removal:
    """What a run of removals took away: events per project, bytes, files to unlink."""

    events: Counter[int] = field(default_factory=Counter)  # project_id -> events
    bytes: int = 0
    other: Counter[str] = field(default_factory=Counter)  # kind -> items
    files: list[Path] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.events.values())

    def add(self, other: Removal) -> None:
        self.events.update(other.events)
        self.bytes += other.bytes
        self.other.update(other.other)
        self.files += other.files


def remove_events(
    conn: Connection,
    ids: Sequence[int],
    *,
    outcome: Outcome,
    reason: str,
    kinds: Iterable[Prunable] = PRUNABLE_KINDS,
) -> Removal:
    """Delete these events and what belongs to them; count them as ``outcome``/``reason``."""
    removed = retention.remove_events(conn, ids)
    result = Removal()
    event_ids: dict[int, list[str]] = defaultdict(list)
    sizes: dict[tuple[int, str], tuple[int, int]] = {}
    for r in removed:
        event_ids[r.project_id].append(r.event_id)
        n, b = sizes.get((r.project_id, EVENTS), (0, 0))
        sizes[(r.project_id, EVENTS)] = (n - 1, b - r.bytes)
        result.events[r.project_id] += 1
        result.bytes += r.bytes
    for kind in kinds:
        if kind.with_events is None:
            continue
        for project_id, ids_of_project in event_ids.items():
            result.add(account(conn, kind, kind.with_events(conn, project_id, ids_of_project)))
    usage.add_stored(conn, sizes)
    count(conn, result.events, outcome, reason)
    return result


def account(conn: Connection, kind: Prunable, removed: Removed) -> Removal:
    """Subtract what a kind's function removed from the usage counters."""
    deltas = {(p, kind.name): (-n, -removed.bytes.get(p, 0)) for p, n in removed.items.items()}
    usage.add_stored(conn, deltas)
    result = Removal(bytes=sum(removed.bytes.values()), files=list(removed.files))
    result.other[kind.name] += removed.total
    return result


def count(conn: Connection, per_project: Counter[int], outcome: Outcome, reason: str) -> None:
    hour = int(time.time() // 3600)
    usage.count_outcomes(
        conn, {(p, hour, CATEGORY, outcome, reason): n for p, n in per_project.items()}
    )


def unlink(files: Iterable[Path]) -> None:
    """Delete files of removed rows, after their transaction committed."""
    for path in files:
        path.unlink(missing_ok=True)
