"""Changing errors as people triage them: status with its conditions, assignee, review.

Every function takes the ids of the errors to change (one, or a bulk action's batch) and
returns the ids it really changed, so the caller records one activity entry per change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Connection, and_, or_, select

from tracebox.store.tables import errors, project_members, releases, users

CHUNK = 400  # ids per IN (...): well under SQLite's parameter limit
FOR_REVIEW_SECONDS = 7 * 86400  # as Sentry's inbox: new or regressed errors for a week

CLEARED_CONDITIONS = {
    "resolution": None,
    "resolved_release": None,
    "resolved_at": None,
    "ignore_until": None,
    "ignore_count": None,
    "ignore_events_base": None,
    "ignore_user_count": None,
    "ignore_users_base": None,
}


@dataclass(frozen=True)
class UserRow:
    id: int
    username: str
    name: str
    email: str


def chunks(ids: Sequence[int], size: int = CHUNK) -> Iterable[list[int]]:
    for i in range(0, len(ids), size):
        yield list(ids[i : i + size])


def _update(
    conn: Connection,
    project_id: int,
    ids: Sequence[int],
    values: dict[str, Any],
    changed_when: ColumnElement[bool],
) -> list[int]:
    """Set ``values`` on those of ``ids`` (of the project) for which ``changed_when``
    holds; return exactly those ids."""
    changed: list[int] = []
    for chunk in chunks(ids):
        where = and_(errors.c.project_id == project_id, errors.c.id.in_(chunk), changed_when)
        found = [int(r[0]) for r in conn.execute(select(errors.c.id).where(where))]
        if found:
            conn.execute(errors.update().where(errors.c.id.in_(found)).values(**values))
            changed += found
    return changed


def resolve(
    conn: Connection,
    project_id: int,
    ids: Sequence[int],
    *,
    resolution: str,
    release: str | None,
    now: float,
) -> list[int]:
    values = {
        **CLEARED_CONDITIONS,
        "status": "resolved",
        "regressed": False,
        "resolution": resolution,
        "resolved_release": release,
        "resolved_at": now,
        "inbox_at": None,
    }
    column = errors.c.resolved_release
    same_release = column.is_(None) if release is None else column == release
    same = and_(errors.c.status == "resolved", errors.c.resolution == resolution, same_release)
    return _update(conn, project_id, ids, values, ~same)


def ignore(
    conn: Connection,
    project_id: int,
    ids: Sequence[int],
    *,
    until: float | None,
    count: int | None,
    user_count: int | None,
) -> list[int]:
    """Ignore, counting "N more events/users" from the counts the errors have now."""
    values = {
        **CLEARED_CONDITIONS,
        "status": "ignored",
        "regressed": False,
        "ignore_until": until,
        "ignore_count": count,
        "ignore_events_base": errors.c.events_count if count is not None else None,
        "ignore_user_count": user_count,
        "ignore_users_base": errors.c.users_count if user_count is not None else None,
        "inbox_at": None,
    }
    plain = until is None and count is None and user_count is None
    already = and_(
        errors.c.status == "ignored",
        errors.c.ignore_until.is_(None),
        errors.c.ignore_count.is_(None),
        errors.c.ignore_user_count.is_(None),
    )
    changed_when = ~already if plain else errors.c.id.is_not(None)  # a new condition: always
    return _update(conn, project_id, ids, values, changed_when)


def unresolve(conn: Connection, project_id: int, ids: Sequence[int]) -> list[int]:
    values = {**CLEARED_CONDITIONS, "status": "unresolved", "regressed": False}
    return _update(conn, project_id, ids, values, errors.c.status != "unresolved")


def assign(conn: Connection, project_id: int, ids: Sequence[int], user_id: int | None) -> list[int]:
    column = errors.c.assignee_id
    changed_when = (
        column.is_not(None) if user_id is None else or_(column.is_(None), column != user_id)
    )
    return _update(conn, project_id, ids, {"assignee_id": user_id}, changed_when)


def mark_reviewed(conn: Connection, project_id: int, ids: Sequence[int]) -> list[int]:
    return _update(conn, project_id, ids, {"inbox_at": None}, errors.c.inbox_at.is_not(None))


def assignable(conn: Connection, project_id: int, user_id: int, min_level: int) -> UserRow | None:
    """A project member with at least ``min_level`` (who can see the error), else None."""
    query = (
        select(users.c.id, users.c.username, users.c.name, users.c.email)
        .select_from(users.join(project_members, project_members.c.user_id == users.c.id))
        .where(
            project_members.c.project_id == project_id,
            users.c.id == user_id,
            project_members.c.access_level >= min_level,
            users.c.is_blocked.is_(False),
        )
    )
    row = conn.execute(query).first()
    return UserRow(*row) if row else None


def assignable_members(conn: Connection, project_id: int, min_level: int) -> list[tuple[int, str]]:
    """(id, username) of every member who can be assigned errors, by username."""
    query = (
        select(users.c.id, users.c.username)
        .select_from(users.join(project_members, project_members.c.user_id == users.c.id))
        .where(
            project_members.c.project_id == project_id,
            project_members.c.access_level >= min_level,
            users.c.is_blocked.is_(False),
        )
        .order_by(users.c.username)
    )
    return [(int(i), str(u)) for i, u in conn.execute(query)]


def user_id_by_name(conn: Connection, username: str) -> int | None:
    value = conn.execute(select(users.c.id).where(users.c.username == username)).scalar()
    return int(value) if value is not None else None


def user_rows(conn: Connection, ids: Iterable[int]) -> dict[int, UserRow]:
    wanted = sorted(set(ids))
    found: dict[int, UserRow] = {}
    for chunk in chunks(wanted):
        query = select(users.c.id, users.c.username, users.c.name, users.c.email).where(
            users.c.id.in_(chunk)
        )
        found.update({int(r[0]): UserRow(*r) for r in conn.execute(query)})
    return found


def latest_release(conn: Connection, project_id: int) -> str | None:
    """The release created or first seen most recently ("the next release" comes after it)."""
    query = (
        select(releases.c.version)
        .where(releases.c.project_id == project_id)
        .order_by(releases.c.created_at.desc(), releases.c.id.desc())
        .limit(1)
    )
    value = conn.execute(query).scalar()
    return str(value) if value is not None else None
