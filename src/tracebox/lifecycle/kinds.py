"""The registry of data kinds that retention, the disk budget and deletions remove
besides events. A feature that stores such data adds one ``Prunable`` entry to
``PRUNABLE_KINDS``, with the store functions that remove it; nothing else changes.

Contract for every function: it runs inside the caller's write transaction, removes at
most what it is asked to, subtracts what it removed from ``store.usage`` (or returns it
in ``Removed`` for the caller to subtract, as below), and names files to unlink in
``Removed.files``: the caller deletes them only after the transaction committed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Connection

from tracebox.store import artifacts, attachments, logs


@dataclass(frozen=True)
class Removed:
    """What one call removed, per project: items and bytes, and files to unlink after
    commit. The caller subtracts ``items`` and ``bytes`` from ``storage_usage``."""

    items: dict[int, int] = field(default_factory=dict)  # project_id -> items
    bytes: dict[int, int] = field(default_factory=dict)  # project_id -> bytes
    files: tuple[Path, ...] = ()

    @property
    def total(self) -> int:
        return sum(self.items.values())


NOTHING = Removed()


@dataclass(frozen=True)
class Prunable:
    """One kind of stored data, and how each removal reaches it. A function left as None
    means that path does not apply (logs have no event; attachments no age of their own).
    """

    name: str  # its kind in storage_usage: "attachments", "logs", "artifacts"
    # What belongs to these events of a project (removed with them): (conn, project, event ids).
    with_events: Callable[[Connection, int, Sequence[str]], Removed] | None = None
    # Up to `limit` of a project's rows older than a unix time: (conn, project, before, limit).
    older_than: Callable[[Connection, int, float, int], Removed] | None = None
    # Up to `limit` of a project's rows, for erasing its data: (conn, project, limit).
    of_project: Callable[[Connection, int, int], Removed] | None = None
    # The disk budget: the time of the instance's oldest row, and removing the oldest
    # `limit` rows of the instance. Only for kinds with their own age.
    oldest: Callable[[Connection], float | None] | None = None
    remove_oldest: Callable[[Connection, int], Removed] | None = None
    # A kind that does not keep ``storage_usage`` counters says what a project stores
    # (items, bytes) when asked; removals are then not subtracted from the counters.
    usage: Callable[[Connection, int], tuple[int, int]] | None = None

    @property
    def counted(self) -> bool:
        return self.usage is None


def _artifact_usage(conn: Connection, project_id: int) -> tuple[int, int]:
    totals = artifacts.release_totals(conn, project_id).values()
    return sum(r.files for r in totals), artifacts.project_bytes(conn, project_id)


def _artifacts_before(conn: Connection, project_id: int, before: float, _limit: int) -> Removed:
    removed = artifacts.delete_older_than(conn, project_id, before=before)
    return Removed(items={project_id: removed} if removed else {})


# Source-map artifacts (store.artifacts): uploaded before the project's maximum age, or
# every one when the project's data is erased. A few files per release: one call each.
ARTIFACTS = Prunable(
    name="artifacts",
    older_than=_artifacts_before,
    of_project=lambda conn, project_id, limit: _artifacts_before(
        conn, project_id, float("inf"), limit
    ),
    usage=_artifact_usage,
)


def _one(project_id: int, removed: tuple[int, int]) -> Removed:
    """A store function's (items, bytes) as the ``Removed`` of one project."""
    items, size = removed
    return Removed(items={project_id: items}, bytes={project_id: size}) if items else NOTHING


def _merged(per_project: dict[int, tuple[int, int]]) -> Removed:
    found = {p: r for p, r in per_project.items() if r[0]}
    return Removed(
        items={p: r[0] for p, r in found.items()}, bytes={p: r[1] for p, r in found.items()}
    )


# Attachments (store.attachments, issue 12): with their events, past the project's
# maximum age, and when its data is erased. They keep their own counters (usage).
ATTACHMENTS = Prunable(
    name="attachments",
    with_events=lambda conn, p, ids: _one(p, attachments.delete_for_events(conn, p, ids)),
    older_than=lambda conn, p, before, limit: _one(
        p, attachments.delete_older_than(conn, p, before, limit)
    ),
    of_project=lambda conn, p, limit: _one(
        p, attachments.delete_older_than(conn, p, float("inf"), limit)
    ),
    usage=attachments.usage,
)

# Log records (store.logs, issue 12): their own time, so also the disk budget's.
LOGS = Prunable(
    name="logs",
    older_than=lambda conn, p, before, limit: _one(
        p, logs.delete_older_than(conn, p, before, limit)
    ),
    of_project=lambda conn, p, limit: _one(p, logs.delete_older_than(conn, p, float("inf"), limit)),
    oldest=logs.oldest,
    remove_oldest=lambda conn, limit: _merged(logs.remove_oldest(conn, limit)),
    usage=logs.usage,
)

# One entry per kind.
PRUNABLE_KINDS: tuple[Prunable, ...] = (ARTIFACTS, ATTACHMENTS, LOGS)
