"""Events written through the digest's own preparation and batch write, at chosen times."""

from __future__ import annotations

import itertools
import time
from typing import Any

import sqlalchemy as sa

from tracebox.digest.prepare import Preparer
from tracebox.protocol.event import normalize_event
from tracebox.store import Database, projects
from tracebox.store import digest as store_digest
from tracebox.store.tables import error_hourly, error_users, errors, events

DAY = 86400.0
_ids = itertools.count(1)


def project(db: Database, path: str) -> int:
    with db.write() as conn:
        created = projects.create(conn, path, path.rsplit("/", 1)[-1])
        projects.put_settings(conn, created.id, active=True, integrated=True)
    return created.id


def event(
    message: str = "boom",
    *,
    exc_type: str = "ValueError",
    user: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """An error event; events with the same ``exc_type`` and ``message`` group together."""
    raw: dict[str, Any] = {
        "event_id": f"{next(_ids):032x}",
        "level": "error",
        "exception": {"values": [{"type": exc_type, "value": message}]},
        "user": user or {"id": "u1"},
        "release": "web@1.0",
    }
    raw.update(extra)
    return raw


def store(db: Database, project_id: int, *raws: dict[str, Any], at: float | None = None) -> None:
    """Store events as the digest would, received (and timestamped) at ``at``."""
    when = at if at is not None else time.time()
    preparer = Preparer()
    prepared = [
        preparer.prepare_event(
            project_id,
            normalize_event(dict(raw, timestamp=when), received_at=when, client_ip="192.0.2.9"),
        )
        for raw in raws
    ]
    with db.write() as conn:
        store_digest.write_events(conn, prepared)


def event_ids(db: Database, project_id: int | None = None) -> list[str]:
    query = sa.select(events.c.event_id).order_by(events.c.id)
    if project_id is not None:
        query = query.where(events.c.project_id == project_id)
    with db.read() as conn:
        return list(conn.execute(query).scalars())


def aggregates(db: Database) -> dict[str, Any]:
    """Everything retention must leave as it is: errors with their counts and times, the
    distinct users and the hourly counts."""
    with db.read() as conn:
        return {
            "errors": [
                tuple(r)
                for r in conn.execute(
                    sa.select(
                        errors.c.id,
                        errors.c.events_count,
                        errors.c.users_count,
                        errors.c.first_seen,
                        errors.c.last_seen,
                        errors.c.first_release,
                        errors.c.last_release,
                    ).order_by(errors.c.id)
                )
            ],
            "users": sorted(tuple(r) for r in conn.execute(sa.select(error_users))),
            "hourly": sorted(tuple(r) for r in conn.execute(sa.select(error_hourly))),
        }
