"""Counts for operators, benchmarks and tests (``tracebox stats``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, func, select

from tracebox.store.tables import dropped_items, errors, events, sessions


def counts(conn: Connection) -> dict[str, Any]:
    def count(table: Any) -> int:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())

    dropped = {
        t: int(n)
        for t, n in conn.execute(
            select(dropped_items.c.item_type, func.sum(dropped_items.c.count)).group_by(
                dropped_items.c.item_type
            )
        )
    }
    events_total = conn.execute(select(func.coalesce(func.sum(errors.c.events_count), 0)))
    return {
        "events": count(events),
        "errors": count(errors),
        "events_counted": int(events_total.scalar_one()),
        "sessions": count(sessions),
        "dropped": dropped,
    }
