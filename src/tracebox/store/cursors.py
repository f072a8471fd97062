"""Spool cursors: how far each node's digest has consumed each of its spool segments.

Each node's digest reads and writes only its own rows (``node`` is the id in its data
directory), so N nodes on one database never move each other's positions; and a
position only ever moves forward (``advance``), so a stale write cannot replay records.
The digest writes positions in the same transaction as the rows derived from the
records (exactly-once, docs/design.md).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, select

from tracebox.store.dialect import insert_for
from tracebox.store.tables import spool_cursors

LEGACY_NODE = ""  # rows written before cursors were per node (revision 0002)
_CHUNK = 400  # names per IN list


def load(conn: Connection, node: str) -> dict[str, int]:
    c = spool_cursors.c
    query = select(c.segment, c.position).where(c.node == node)
    return {segment: position for segment, position in conn.execute(query)}


def advance(conn: Connection, node: str, positions: Mapping[str, int]) -> None:
    """Upsert ``positions``, moving each only forward (a lower position is ignored)."""
    if not positions:
        return
    rows = [{"node": node, "segment": s, "position": p} for s, p in positions.items()]
    conn.execute(_advance(conn.dialect.name), rows)


@lru_cache(maxsize=2)
def _advance(dialect: str) -> Any:
    # Built once per dialect: every digest batch runs it, and building it (``excluded``,
    # then the cache key) cost more than running it.
    stmt = insert_for(dialect, spool_cursors)
    return stmt.on_conflict_do_update(
        index_elements=["node", "segment"],
        set_={"position": stmt.excluded.position},
        where=spool_cursors.c.position < stmt.excluded.position,
    )


def forget(conn: Connection, node: str, segments: Iterable[str]) -> None:
    """Delete the rows of segments this node has deleted."""
    names = list(segments)
    for i in range(0, len(names), _CHUNK):
        conn.execute(
            spool_cursors.delete().where(
                spool_cursors.c.node == node, spool_cursors.c.segment.in_(names[i : i + _CHUNK])
            )
        )


def adopt_legacy(conn: Connection, node: str, segments: Collection[str]) -> int:
    """Take over the rows written before cursors were per node, for ``segments`` (the
    node's own spool files); return how many. Other nodes' legacy rows stay theirs."""
    c = spool_cursors.c
    names = list(segments)
    adopted = 0
    for i in range(0, len(names), _CHUNK):
        chunk = names[i : i + _CHUNK]
        legacy = select(c.segment, c.position).where(c.node == LEGACY_NODE, c.segment.in_(chunk))
        found = {segment: position for segment, position in conn.execute(legacy)}
        if found:
            advance(conn, node, found)
            forget(conn, LEGACY_NODE, found)
            adopted += len(found)
    return adopted
