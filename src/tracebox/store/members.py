"""Project members and the projects a user can see."""

from __future__ import annotations

import time
from typing import Any, TypeAlias

from sqlalchemy import Connection, Row, Select, func, or_, select

from tracebox.models import AccessLevel, Member, Project
from tracebox.store.accounts import USER_COLUMNS, user_from_row
from tracebox.store.tables import project_members as pm
from tracebox.store.tables import projects, users

AnyRow: TypeAlias = Row[*tuple[Any, ...]]


def access_level(conn: Connection, project_id: int, user_id: int) -> AccessLevel | None:
    query = select(pm.c.access_level).where(pm.c.project_id == project_id, pm.c.user_id == user_id)
    value = conn.execute(query).scalar_one_or_none()
    return AccessLevel(value) if value is not None else None


def _member(row: AnyRow) -> Member:
    m = row._mapping
    return Member(
        project_id=m["project_id"],
        user=user_from_row(row),
        access_level=AccessLevel(m["access_level"]),
        created_at=m["member_created_at"],
    )


def _members_query() -> Select[Any]:
    return select(
        *USER_COLUMNS,
        pm.c.project_id,
        pm.c.access_level,
        pm.c.created_at.label("member_created_at"),
    ).select_from(pm.join(users, users.c.id == pm.c.user_id))


def get(conn: Connection, project_id: int, user_id: int) -> Member | None:
    query = _members_query().where(pm.c.project_id == project_id, pm.c.user_id == user_id)
    row = conn.execute(query).first()
    return _member(row) if row else None


def list_page(conn: Connection, project_id: int, *, offset: int, limit: int) -> list[Member]:
    query = (
        _members_query()
        .where(pm.c.project_id == project_id)
        .order_by(pm.c.user_id)
        .offset(offset)
        .limit(limit)
    )
    return [_member(r) for r in conn.execute(query)]


def count(conn: Connection, project_id: int) -> int:
    query = select(func.count()).select_from(pm).where(pm.c.project_id == project_id)
    return int(conn.execute(query).scalar_one())


def count_owners(conn: Connection, project_id: int) -> int:
    query = (
        select(func.count())
        .select_from(pm)
        .where(pm.c.project_id == project_id, pm.c.access_level == int(AccessLevel.OWNER))
    )
    return int(conn.execute(query).scalar_one())


def add(conn: Connection, project_id: int, user_id: int, level: AccessLevel) -> None:
    conn.execute(
        pm.insert().values(
            project_id=project_id, user_id=user_id, access_level=int(level), created_at=time.time()
        )
    )


def update(conn: Connection, project_id: int, user_id: int, level: AccessLevel) -> None:
    conn.execute(
        pm.update()
        .where(pm.c.project_id == project_id, pm.c.user_id == user_id)
        .values(access_level=int(level))
    )


def remove(conn: Connection, project_id: int, user_id: int) -> None:
    conn.execute(pm.delete().where(pm.c.project_id == project_id, pm.c.user_id == user_id))


def _visible(user_id: int | None) -> Select[Any]:
    """Projects of a member (``user_id``), or every project (None: an admin)."""
    query = select(projects)
    if user_id is not None:
        query = query.where(
            projects.c.id.in_(select(pm.c.project_id).where(pm.c.user_id == user_id))
        )
    return query


def namespace_visible(conn: Connection, user_id: int | None, namespace: str) -> bool:
    """Whether the user (None: an admin) sees a project directly in ``namespace`` (or a
    top-level project of that name): Sentry's "organization" of the /api/0 subset."""
    escaped = namespace.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    inner = _visible(user_id).where(
        or_(
            projects.c.path == namespace,
            projects.c.path.like(escaped + "/%", escape="\\")
            & ~projects.c.path.like(escaped + "/%/%", escape="\\"),
        )
    )
    return conn.execute(select(inner.exists())).scalar() is True


def count_visible(conn: Connection, user_id: int | None) -> int:
    inner = _visible(user_id).subquery()
    return int(conn.execute(select(func.count()).select_from(inner)).scalar_one())


def list_visible(
    conn: Connection, user_id: int | None, *, offset: int, limit: int
) -> list[Project]:
    query = _visible(user_id).order_by(projects.c.id).offset(offset).limit(limit)
    return [
        Project(
            id=r.id,
            path=r.path,
            name=r.name,
            monitor_access_level=r.monitor_access_level,
            created_at=r.created_at,
        )
        for r in conn.execute(query)
    ]
