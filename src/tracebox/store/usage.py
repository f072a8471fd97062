"""Usage counters: what each project stores now, and what happened to its items per hour.

``storage_usage`` holds the items and bytes stored per project and kind (events,
attachments, logs, artifacts): the writer of a kind adds in its own transaction, and
whatever removes rows subtracts in the same transaction, so the counters stay exact
without ever scanning the big tables. ``usage_hourly`` counts outcomes per hour, data
category and reason: accepted, refused (ingestion), expired and deleted (lifecycle),
and what SDKs report they discarded (client reports).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sqlalchemy import Connection, func, select

from tracebox.store.dialect import insert
from tracebox.store.tables import dropped_items, projects, storage_usage, usage_hourly

EVENTS = "events"  # the storage_usage kind of stored events


class Outcome(StrEnum):
    ACCEPTED = "accepted"  # stored
    REFUSED = "refused"  # by ingestion: rate_limit, quota, spike_protection, invalid, too_large
    EXPIRED = "expired"  # removed by retention: age, count, disk_budget
    DELETED = "deleted"  # removed on request: error, user, project
    CLIENT_DISCARDED = "client_discarded"  # SDK client reports: queue_overflow, ...


@dataclass(frozen=True)
class Stored:
    kind: str
    items: int
    bytes: int


@dataclass(frozen=True)
class OutcomeCount:
    category: str
    outcome: str
    reason: str
    count: int


@dataclass(frozen=True)
class ProjectUsage:
    project_id: int
    path: str
    items: int
    bytes: int


# (project_id, kind) -> (items, bytes); negative to subtract
StorageDelta = Mapping[tuple[int, str], tuple[int, int]]
# (project_id, hour, category, outcome, reason) -> count
OutcomeDelta = Mapping[tuple[int, int, str, str, str], int]


def add_stored(conn: Connection, deltas: StorageDelta) -> None:
    """Add (or, with negative numbers, subtract) stored items and bytes."""
    rows = [
        {"project_id": p, "kind": k, "items": n, "bytes": b}
        for (p, k), (n, b) in deltas.items()
        if n or b
    ]
    if not rows:
        return
    rows.sort(key=lambda r: (r["project_id"], r["kind"]))
    conn.execute(_built(conn, _build_add_stored), rows)


def count_outcomes(conn: Connection, counts: OutcomeDelta) -> None:
    rows = [
        {"project_id": p, "hour": h, "category": c, "outcome": o, "reason": r, "count": n}
        for (p, h, c, o, r), n in counts.items()
        if n
    ]
    if not rows:
        return
    conn.execute(_built(conn, _build_count_outcomes), rows)


# The two upserts are built once per dialect: building one (``excluded`` proxies every
# column, then its cache key) cost more than running it, inside cleanup's and the
# digest's write transactions (py-spy; docs/performance.md, "Storage").
_UPSERTS: dict[tuple[Callable[[Connection], Any], str], Any] = {}


def _built(conn: Connection, build: Callable[[Connection], Any]) -> Any:
    key = (build, conn.dialect.name)
    found = _UPSERTS.get(key)
    if found is None:
        found = _UPSERTS[key] = build(conn)
    return found


def _build_add_stored(conn: Connection) -> Any:
    stmt = insert(conn, storage_usage)
    return stmt.on_conflict_do_update(
        index_elements=["project_id", "kind"],
        set_={
            "items": storage_usage.c["items"] + stmt.excluded["items"],
            "bytes": storage_usage.c.bytes + stmt.excluded.bytes,
        },
    )


def _build_count_outcomes(conn: Connection) -> Any:
    stmt = insert(conn, usage_hourly)
    return stmt.on_conflict_do_update(
        index_elements=["project_id", "hour", "category", "outcome", "reason"],
        set_={"count": usage_hourly.c.count + stmt.excluded.count},
    )


def events_stored(conn: Connection, stored: Iterable[tuple[int, float, int]]) -> None:
    """The digest's hook: events really inserted, as (project_id, received, payload
    bytes). Counted as stored and as accepted in the hour they were received."""
    sizes: dict[tuple[int, str], tuple[int, int]] = {}
    accepted: dict[tuple[int, int, str, str, str], int] = defaultdict(int)
    for project_id, received, size in stored:
        items, total = sizes.get((project_id, EVENTS), (0, 0))
        sizes[(project_id, EVENTS)] = (items + 1, total + size)
        accepted[(project_id, int(received // 3600), "error", Outcome.ACCEPTED, "")] += 1
    add_stored(conn, sizes)
    count_outcomes(conn, accepted)


def stored(conn: Connection, project_id: int) -> dict[str, Stored]:
    t = storage_usage
    query = select(t.c.kind, t.c["items"], t.c.bytes).where(t.c.project_id == project_id)
    return {k: Stored(k, int(n), int(b)) for k, n, b in conn.execute(query)}


def instance_stored(conn: Connection) -> dict[str, Stored]:
    t = storage_usage
    query = select(t.c.kind, func.sum(t.c["items"]), func.sum(t.c.bytes)).group_by(t.c.kind)
    return {k: Stored(k, int(n or 0), int(b or 0)) for k, n, b in conn.execute(query)}


def largest_projects(conn: Connection, limit: int) -> list[ProjectUsage]:
    """Projects by bytes stored (every kind), largest first."""
    t = storage_usage
    total = func.sum(t.c.bytes).label("bytes")
    query = (
        select(t.c.project_id, projects.c.path, func.sum(t.c["items"]).label("items"), total)
        .join(projects, projects.c.id == t.c.project_id)
        .group_by(t.c.project_id, projects.c.path)
        .order_by(total.desc(), t.c.project_id)
        .limit(limit)
    )
    return [ProjectUsage(int(p), path, int(n), int(b)) for p, path, n, b in conn.execute(query)]


def outcomes(conn: Connection, project_id: int | None, *, since_hour: int) -> list[OutcomeCount]:
    """Counts per category, outcome and reason since ``since_hour``; every project's
    when ``project_id`` is None (usage_hourly's key, then a scan of the recent hours)."""
    t = usage_hourly
    query = (
        select(t.c.category, t.c.outcome, t.c.reason, func.sum(t.c.count))
        .where(t.c.hour >= since_hour)
        .group_by(t.c.category, t.c.outcome, t.c.reason)
        .order_by(t.c.category, t.c.outcome, t.c.reason)
    )
    if project_id is not None:
        query = query.where(t.c.project_id == project_id)
    return [OutcomeCount(c, o, r, int(n)) for c, o, r, n in conn.execute(query)]


def daily_outcomes(
    conn: Connection, project_id: int, *, since_hour: int
) -> dict[int, dict[str, int]]:
    """Per day (unix seconds // 86400): counts per outcome, for the usage chart."""
    t = usage_hourly
    query = (
        select(t.c.hour, t.c.outcome, func.sum(t.c.count))
        .where(t.c.project_id == project_id, t.c.hour >= since_hour, t.c.category == "error")
        .group_by(t.c.hour, t.c.outcome)
    )
    days: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for hour, outcome, n in conn.execute(query):
        days[int(hour) // 24][outcome] += int(n)
    return days


def forget_outcomes_before(conn: Connection, hour: int) -> int:
    """Delete the hourly counters older than ``hour``. Run every cleanup pass, so each
    pass removes about one hour's rows (a few per project)."""
    return conn.execute(usage_hourly.delete().where(usage_hourly.c.hour < hour)).rowcount


def not_kept(conn: Connection, project_id: int) -> dict[str, int]:
    """Items accepted but not stored (transactions, profiles, ...) per item type, as the
    digest counts them in ``dropped_items`` since the project began."""
    t = dropped_items
    query = select(t.c.item_type, t.c.count).where(t.c.project_id == project_id)
    return {item_type: int(n) for item_type, n in conn.execute(query.order_by(t.c.item_type))}


def existing_projects(conn: Connection, project_ids: Iterable[int]) -> set[int]:
    """Those of ``project_ids`` that exist (counters of deleted projects are dropped)."""
    ids = list(project_ids)
    if not ids:
        return set()
    query = select(projects.c.id).where(projects.c.id.in_(ids))
    return {int(i) for i in conn.execute(query).scalars()}


def refused_since(conn: Connection, project_id: int, hour: int, reason: str) -> int:
    """Items of the project refused for ``reason`` since ``hour`` (usage_hourly's key)."""
    t = usage_hourly
    query = select(func.coalesce(func.sum(t.c.count), 0)).where(
        t.c.project_id == project_id,
        t.c.hour >= hour,
        t.c.outcome == Outcome.REFUSED.value,
        t.c.reason == reason,
    )
    return int(conn.execute(query).scalar_one())
