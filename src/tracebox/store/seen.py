"""Releases and environments a project's events reported, and each user's choice of
environment per project (the environment selector remembers it)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

from sqlalchemy import Connection, case, select

from tracebox.store.dialect import insert
from tracebox.store.tables import project_environments, project_releases
from tracebox.store.tables import user_project_preferences as prefs

Span = tuple[float, float]  # first and last timestamp seen
MAX_ENVIRONMENTS = 100  # listed in a selector; Sentry's environment list is as short


def record(
    conn: Connection,
    releases: Mapping[tuple[int, str], Span],
    environments: Mapping[tuple[int, str], Span],
) -> None:
    """Upsert what one digest batch saw: (project, value) -> (first, last) timestamp."""
    for table, column, seen in (
        (project_releases, "version", releases),
        (project_environments, "name", environments),
    ):
        if not seen:
            continue
        stmt = insert(conn, table)
        ex = stmt.excluded
        stmt = stmt.on_conflict_do_update(
            index_elements=["project_id", column],
            set_={
                "first_seen": case(
                    (ex.first_seen < table.c.first_seen, ex.first_seen), else_=table.c.first_seen
                ),
                "last_seen": case(
                    (ex.last_seen > table.c.last_seen, ex.last_seen), else_=table.c.last_seen
                ),
            },
        )
        rows = [
            {"project_id": p, column: value, "first_seen": first, "last_seen": last}
            for (p, value), (first, last) in sorted(seen.items())
        ]
        conn.execute(stmt, rows)


def release_first_seen(
    conn: Connection, project_id: int, versions: Iterable[str]
) -> dict[str, float]:
    wanted = sorted(set(versions))
    if not wanted:
        return {}
    query = select(project_releases.c.version, project_releases.c.first_seen).where(
        project_releases.c.project_id == project_id, project_releases.c.version.in_(wanted)
    )
    return {str(v): float(t) for v, t in conn.execute(query)}


def releases(conn: Connection, project_id: int, limit: int = 100) -> list[str]:
    """The most recent releases first (the "resolve in release" choices)."""
    query = (
        select(project_releases.c.version)
        .where(project_releases.c.project_id == project_id)
        .order_by(project_releases.c.first_seen.desc())
        .limit(limit)
    )
    return [str(v) for v in conn.execute(query).scalars()]


def environments(conn: Connection, project_id: int) -> list[str]:
    query = (
        select(project_environments.c.name)
        .where(project_environments.c.project_id == project_id)
        .order_by(project_environments.c.name)
        .limit(MAX_ENVIRONMENTS)
    )
    return [str(v) for v in conn.execute(query).scalars()]


def chosen_environment(conn: Connection, user_id: int, project_id: int) -> str | None:
    query = select(prefs.c.environment).where(
        prefs.c.user_id == user_id, prefs.c.project_id == project_id
    )
    value = conn.execute(query).scalar()
    return str(value) if value is not None else None


def choose_environment(conn: Connection, user_id: int, project_id: int, name: str | None) -> None:
    stmt = insert(conn, prefs).values(
        user_id=user_id, project_id=project_id, environment=name, updated_at=time.time()
    )
    stmt = stmt.on_conflict_do_update(
        index_elements=["user_id", "project_id"],
        set_={"environment": stmt.excluded.environment, "updated_at": stmt.excluded.updated_at},
    )
    conn.execute(stmt)
