"""Ingestion quotas per project (or per client key) and spike protection settings.

A quota is at most ``max_count`` items of one data category per fixed window of a
minute, an hour or a day. Ingestion reads a project's quotas through a short cache
(``ingest.ratelimit``), so a change reaches every node within seconds.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, select

from tracebox.store.tables import client_keys, quotas, spike_protection

WINDOWS = {60: "minute", 3600: "hour", 86400: "day"}
# Sentry's data categories (an envelope item's type maps to one); append only: the
# shared ingest counters number them by position.
CATEGORIES = (
    "default", "error", "session", "attachment", "log_item", "transaction", "profile",
    "replay", "span", "monitor", "internal", "feedback", "security",
)  # fmt: skip


@dataclass(frozen=True)
class Quota:
    category: str  # Sentry's data category: error, session, attachment, log_item, ...
    window_seconds: int  # 60, 3600 or 86400
    max_count: int
    key_id: int | None = None  # None: the whole project


@dataclass(frozen=True)
class SpikeProtection:
    enabled: bool = False
    multiplier: float = 10.0  # limit a minute at this many times the trailing hour's rate


@dataclass(frozen=True)
class ProjectLimits:
    """What ingestion needs to enforce a project's limits."""

    project_id: int
    quotas: tuple[Quota, ...] = ()
    spike: SpikeProtection = SpikeProtection()


def get(conn: Connection, project_id: int) -> ProjectLimits:
    t = quotas
    query = (
        select(t.c.category, t.c.window_seconds, t.c.max_count, t.c.key_id)
        .where(t.c.project_id == project_id)
        .order_by(t.c.key_id.is_not(None), t.c.key_id, t.c.category, t.c.window_seconds)
    )
    found = tuple(Quota(c, int(w), int(n), k) for c, w, n, k in conn.execute(query))
    s = spike_protection
    row = conn.execute(
        select(s.c.enabled, s.c.multiplier).where(s.c.project_id == project_id)
    ).first()
    spike = SpikeProtection(bool(row[0]), float(row[1])) if row else SpikeProtection()
    return ProjectLimits(project_id, found, spike)


def put(
    conn: Connection, project_id: int, limits: Sequence[Quota], spike: SpikeProtection
) -> ProjectLimits:
    """Replace the project's quotas and spike protection. Client keys must belong to
    the project (``ValueError`` otherwise)."""
    keys = {k.key_id for k in limits if k.key_id is not None}
    if keys:
        owned = set(
            conn.execute(
                select(client_keys.c.id).where(
                    client_keys.c.project_id == project_id, client_keys.c.id.in_(keys)
                )
            ).scalars()
        )
        if owned != keys:
            raise ValueError("a quota names a client key of another project")
    conn.execute(quotas.delete().where(quotas.c.project_id == project_id))
    if limits:
        conn.execute(
            quotas.insert(),
            [
                {
                    "project_id": project_id,
                    "key_id": q.key_id,
                    "category": q.category,
                    "window_seconds": q.window_seconds,
                    "max_count": q.max_count,
                }
                for q in limits
            ],
        )
    values = {"enabled": spike.enabled, "multiplier": spike.multiplier, "updated_at": time.time()}
    s = spike_protection
    if not conn.execute(s.update().where(s.c.project_id == project_id).values(values)).rowcount:
        conn.execute(s.insert().values(project_id=project_id, **values))
    return get(conn, project_id)
