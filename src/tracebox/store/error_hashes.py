"""Grouping hash -> error (``error_hashes``), and the digest's per-process cache of it.

The digest finds an event's error by its grouping hashes: the current grouping version's
hash first, then the fallback hashes of older versions (``grouping.Grouping``). What it
found is cached per project for as long as the project's ``grouping_epoch`` stays put.
Whoever deletes, merges or unmerges errors, or re-points their hashes, calls
``bump_epoch`` first in that transaction: on PostgreSQL it locks the project's row, so
it waits for the digest batches of that project in flight (which read the epoch with a
share lock) and they wait for it; every digest then drops its cached ids of the project.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, Select, select

from tracebox.store.bulk import in_ids, rows_matching
from tracebox.store.dialect import insert
from tracebox.store.tables import error_hashes, projects

MAX_CACHED_HASHES = 100_000  # about 15 MB; past it the cache starts again empty

Key = tuple[int, str]  # (project id, hash)


def lookup(conn: Connection, keys: Collection[Key]) -> dict[Key, int]:
    """The error of each ``(project id, hash)`` that has one."""
    pair = (error_hashes.c.project_id, error_hashes.c.hash)
    rows = rows_matching(conn, pair, sorted(keys), error_hashes.c.error_id)
    return {(int(p), h): int(e) for p, h, e in rows}


def add(conn: Connection, rows: Iterable[tuple[int, str, int]]) -> None:
    """Map ``(project id, hash)`` to an error; a hash already mapped keeps its error.
    Sorted, so two digests inserting the same hashes cannot deadlock."""
    params = [{"project_id": p, "hash": h, "error_id": e} for p, h, e in sorted(set(rows))]
    if params:
        stmt = insert(conn, error_hashes).on_conflict_do_nothing(
            index_elements=["project_id", "hash"]
        )
        conn.execute(stmt, params)


def epochs(conn: Connection, project_ids: Collection[int]) -> dict[int, int]:
    """The ``grouping_epoch`` of each existing project among ``project_ids``; on
    PostgreSQL under a share lock held until the transaction ends (see the module)."""
    if not project_ids:
        return {}
    query = _epochs_query(conn.dialect.name)
    return {
        int(pid): int(epoch) for pid, epoch in conn.execute(query, {"ids": sorted(project_ids)})
    }


@lru_cache(maxsize=2)
def _epochs_query(dialect: str) -> Select[Any]:
    # Built once: building and hashing it anew each batch cost ~0.5 us/event (SQLite).
    return (
        select(projects.c.id, projects.c.grouping_epoch)
        .where(in_ids(dialect, projects.c.id))
        .order_by(projects.c.id)
        .with_for_update(read=True)  # FOR SHARE; SQLite has no row locks (one writer)
    )


def bump_epoch(conn: Connection, project_id: int) -> None:
    """Drop every digest's cached hash -> error ids of the project (see the module)."""
    conn.execute(
        projects.update()
        .where(projects.c.id == project_id)
        .values(grouping_epoch=projects.c.grouping_epoch + 1)
    )


class ErrorIdCache:
    """``(project id, hash) -> error id`` for one digest process, per grouping epoch.

    Only ids read from the database are put here, never the id of an error the current
    transaction created: if it rolls back, that id may be reused (SQLite) for another
    error. A new error is cached when a later batch looks it up.
    """

    def __init__(self, max_entries: int = MAX_CACHED_HASHES) -> None:
        self._max_entries = max_entries
        self._projects: dict[int, tuple[int, dict[str, int]]] = {}  # id -> (epoch, ids)
        self._entries = 0

    def refresh(self, conn: Connection, project_ids: Collection[int]) -> None:
        """Read the projects' epochs (call first in the write transaction) and forget
        the ids of any project whose epoch moved or that is gone."""
        current = epochs(conn, project_ids)
        for project_id in project_ids:
            cached = self._projects.get(project_id)
            if cached is not None and cached[0] != current.get(project_id):
                self._entries -= len(cached[1])
                del self._projects[project_id]
        for project_id, epoch in current.items():
            self._projects.setdefault(project_id, (epoch, {}))

    def get(self, project_id: int, hash_: str) -> int | None:
        cached = self._projects.get(project_id)
        return cached[1].get(hash_) if cached is not None else None

    def put(self, project_id: int, hash_: str, error_id: int) -> None:
        cached = self._projects.get(project_id)
        if cached is None:
            return  # only projects whose epoch was read this batch are cached
        if self._entries >= self._max_entries:
            for _, ids in self._projects.values():
                ids.clear()
            self._entries = 0
        if hash_ not in cached[1]:
            self._entries += 1
        cached[1][hash_] = error_id
