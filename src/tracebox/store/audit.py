"""The audit log: who did what, when (deletions and storage settings).

Rows are only ever added. Names are copied into the row, so the trail survives the
deletion of the user or the project it mentions.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import Connection, select

from tracebox.store.tables import audit_events


@dataclass(frozen=True)
class Author:
    """Who did it: a user (id and username), or the system (id None)."""

    id: int | None
    name: str


@dataclass(frozen=True)
class AuditEvent:
    id: int
    created_at: float
    author_id: int | None
    author_name: str
    project_id: int | None
    project_path: str | None
    action: str  # e.g. "error.delete", "user_data.delete", "retention.update"
    target: str  # what it was done to, e.g. "error 12"
    details: dict[str, Any]


def record(
    conn: Connection,
    author: Author,
    *,
    project_id: int | None,
    project_path: str | None,
    action: str,
    target: str,
    details: dict[str, Any] | None = None,
) -> AuditEvent:
    row = {
        "created_at": time.time(),
        "author_id": author.id,
        "author_name": author.name,
        "project_id": project_id,
        "project_path": project_path,
        "action": action,
        "target": target,
        "details": orjson.dumps(details or {}).decode(),
    }
    new_id = conn.execute(audit_events.insert().values(**row).returning(audit_events.c.id))
    return _event({**row, "id": int(new_id.scalar_one())})


def list_page(
    conn: Connection, *, project_id: int | None, before_id: int | None, limit: int
) -> list[AuditEvent]:
    """Newest first; keyset by id (ix_audit_events_project for a project, else the key)."""
    t = audit_events
    query = select(t).order_by(t.c.id.desc()).limit(limit)
    if project_id is not None:
        query = query.where(t.c.project_id == project_id)
    if before_id is not None:
        query = query.where(t.c.id < before_id)
    return [_event(dict(row._mapping)) for row in conn.execute(query)]


def _event(m: dict[str, Any]) -> AuditEvent:
    return AuditEvent(**{**m, "details": orjson.loads(m["details"])})
