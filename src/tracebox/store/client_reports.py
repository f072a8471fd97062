"""What SDKs report they discarded (client reports), counted per project, hour, data
category and reason: the usage view puts it next to what the server dropped, so "why
don't I see my errors?" has an answer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import Connection, func, select

from tracebox.store.dialect import insert
from tracebox.store.tables import client_reports

# (project_id, hour, category, reason) -> quantity
Counts = Mapping[tuple[int, int, str, str], int]


@dataclass(frozen=True)
class Discarded:
    category: str  # error, session, attachment, log_item, ...
    reason: str  # queue_overflow, ratelimit_backoff, before_send, sample_rate, ...
    count: int


def add(conn: Connection, counts: Counts) -> None:
    rows = [
        {"project_id": p, "hour": h, "category": c, "reason": r, "count": n}
        for (p, h, c, r), n in sorted(counts.items())
        if n > 0
    ]
    if not rows:
        return
    stmt = insert(conn, client_reports)
    stmt = stmt.on_conflict_do_update(
        index_elements=["project_id", "hour", "category", "reason"],
        set_={"count": client_reports.c.count + stmt.excluded.count},
    )
    conn.execute(stmt, rows)


def totals(conn: Connection, project_id: int, *, since_hour: int) -> list[Discarded]:
    """What the project's SDKs discarded since ``since_hour``, most first (primary key)."""
    t = client_reports.c
    total = func.sum(t.count)
    query = (
        select(t.category, t.reason, total)
        .where(t.project_id == project_id, t.hour >= since_hour)
        .group_by(t.category, t.reason)
        .order_by(total.desc(), t.category, t.reason)
    )
    return [Discarded(c, r, int(n)) for c, r, n in conn.execute(query)]


def forget_before(conn: Connection, hour: int) -> int:
    """Delete counters older than ``hour`` (for the cleanup loop); returns rows removed."""
    return conn.execute(client_reports.delete().where(client_reports.c.hour < hour)).rowcount
