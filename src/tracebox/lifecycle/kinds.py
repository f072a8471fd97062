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


# One entry per kind; the owners of attachments, logs and source-map artifacts add theirs.
PRUNABLE_KINDS: tuple[Prunable, ...] = ()
