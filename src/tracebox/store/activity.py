"""An error's activity: who changed what and when, and comments (``kind`` "note")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import Connection, func, select

from tracebox.store.tables import error_activity as activity
from tracebox.store.tables import users

NOTE = "note"
MAX_TIMELINE = 500  # entries shown on a details page (the newest ones)


@dataclass(frozen=True)
class ActivityRow:
    id: int
    error_id: int
    kind: str
    user_id: int | None
    username: str | None
    user_name: str | None
    user_email: str | None
    created_at: float
    updated_at: float | None
    text: str | None
    data: dict[str, Any]


def add(
    conn: Connection,
    project_id: int,
    error_ids: Sequence[int],
    kind: str,
    *,
    user_id: int | None,
    now: float,
    data: dict[str, Any] | None = None,
    text: str | None = None,
) -> int | None:
    """One entry per error; returns the id of the last one inserted (a note's id)."""
    if not error_ids:
        return None
    encoded = orjson.dumps(data or {}).decode()
    rows = [
        {
            "project_id": project_id,
            "error_id": error_id,
            "kind": kind,
            "user_id": user_id,
            "created_at": now,
            "text": text,
            "data": encoded,
        }
        for error_id in error_ids
    ]
    if len(rows) == 1:
        result = conn.execute(activity.insert().values(**rows[0]))
        key = result.inserted_primary_key
        return int(key[0]) if key else None
    conn.execute(activity.insert(), rows)
    return None


def _query() -> Any:
    return select(
        activity.c.id,
        activity.c.error_id,
        activity.c.kind,
        activity.c.user_id,
        users.c.username,
        users.c.name.label("user_name"),
        users.c.email.label("user_email"),
        activity.c.created_at,
        activity.c.updated_at,
        activity.c.text,
        activity.c.data,
    ).select_from(activity.outerjoin(users, users.c.id == activity.c.user_id))


def _row(r: Any) -> ActivityRow:
    m = dict(r._mapping)
    m["data"] = orjson.loads(m["data"] or "{}")
    return ActivityRow(**m)


def for_error(conn: Connection, error_id: int, limit: int = MAX_TIMELINE) -> list[ActivityRow]:
    """The newest ``limit`` entries, oldest first (ix_error_activity_error)."""
    query = _query().where(activity.c.error_id == error_id).order_by(activity.c.id.desc())
    rows = [_row(r) for r in conn.execute(query.limit(limit))]
    return rows[::-1]


def get(conn: Connection, error_id: int, activity_id: int) -> ActivityRow | None:
    query = _query().where(activity.c.error_id == error_id, activity.c.id == activity_id)
    row = conn.execute(query).first()
    return _row(row) if row else None


def edit_note(conn: Connection, activity_id: int, text: str, now: float) -> None:
    conn.execute(
        activity.update()
        .where(activity.c.id == activity_id, activity.c.kind == NOTE)
        .values(text=text, updated_at=now)
    )


def delete(conn: Connection, activity_id: int) -> None:
    conn.execute(activity.delete().where(activity.c.id == activity_id))


def count_notes(conn: Connection, error_ids: Sequence[int]) -> dict[int, int]:
    if not error_ids:
        return {}
    query = (
        select(activity.c.error_id, func.count())
        .where(activity.c.error_id.in_(list(error_ids)), activity.c.kind == NOTE)
        .group_by(activity.c.error_id)
    )
    return {int(e): int(n) for e, n in conn.execute(query)}


def move(conn: Connection, from_ids: Sequence[int], to_id: int) -> None:
    """Keep the history of merged errors on the error they were merged into."""
    conn.execute(
        activity.update().where(activity.c.error_id.in_(list(from_ids))).values(error_id=to_id)
    )
