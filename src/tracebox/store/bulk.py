"""Set-based helpers for the digest's batch writes: look many keys up at once, insert
many rows and learn which were new, on both databases."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Column, Connection, Table, select, tuple_

from tracebox.store.dialect import insert

CHUNK = 400  # keys per IN (...) query: 800 parameters for pairs, well within limits


def rows_matching(
    conn: Connection,
    key: tuple[Column[Any], Column[Any]],
    keys: Sequence[tuple[Any, Any]],
    *columns: Column[Any],
) -> list[tuple[Any, ...]]:
    """``key`` and ``columns`` of the rows whose ``key`` pair is one of ``keys``."""
    found: list[tuple[Any, ...]] = []
    for start in range(0, len(keys), CHUNK):
        query = select(*key, *columns).where(tuple_(*key).in_(keys[start : start + CHUNK]))
        found += [tuple(row) for row in conn.execute(query)]
    return found


def insert_new(
    conn: Connection, table: Table, rows: list[dict[str, Any]], key: tuple[str, str]
) -> set[tuple[Any, Any]]:
    """Insert the ``rows`` whose ``key`` is not taken yet (pass them sorted by ``key``, so
    two writers lock keys in one order); return the keys inserted.

    On SQLite the write transaction holds the database lock, so the rows found absent
    are exactly those inserted (and a plain executemany is the fast path). On PostgreSQL
    another node may insert the same key meanwhile, so the insert itself reports what it
    inserted (``RETURNING``).
    """
    if not rows:
        return set()
    stmt = insert(conn, table).on_conflict_do_nothing(index_elements=list(key))
    if conn.dialect.name == "postgresql":
        stmt = stmt.returning(table.c[key[0]], table.c[key[1]])
        return {(a, b) for a, b in conn.execute(stmt, rows)}
    keys = [(r[key[0]], r[key[1]]) for r in rows]
    pair = (table.c[key[0]], table.c[key[1]])
    taken = {(a, b) for a, b in rows_matching(conn, pair, keys)}
    new = [r for r, k in zip(rows, keys, strict=True) if k not in taken]
    if new:
        conn.execute(stmt, new)
    return set(keys) - taken
