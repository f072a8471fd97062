"""Releases and environments a project's events reported (a release's ``created_at`` is
when sentry-cli created it or an event first named it: their order), and each user's
choice of environment per project (the environment selector remembers it)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, case, select

from tracebox.store.dialect import insert, insert_for
from tracebox.store.tables import project_environments, releases
from tracebox.store.tables import user_project_preferences as prefs

Span = tuple[float, float]  # first and last timestamp seen
MAX_ENVIRONMENTS = 100  # listed in a selector; Sentry's environment list is as short


def record(
    conn: Connection,
    versions: Mapping[tuple[int, str], Span],
    environments: Mapping[tuple[int, str], Span],
) -> None:
    """What one digest batch saw, (project, value) -> (first, last) timestamp: a release
    not created yet (by sentry-cli or an earlier event) is created as first seen now."""
    if versions:
        rows = [
            {"project_id": p, "version": v, "created_at": first}
            for (p, v), (first, _) in sorted(versions.items())
        ]
        conn.execute(_insert_releases(conn.dialect.name), rows)
    if environments:
        rows = [
            {"project_id": p, "name": name, "first_seen": first, "last_seen": last}
            for (p, name), (first, last) in sorted(environments.items())
        ]
        conn.execute(_upsert_environments(conn.dialect.name), rows)


# Built once per dialect: building them (``excluded`` proxies every column, then the
# cache key) each digest batch cost about as much as running them.
@lru_cache(maxsize=2)
def _insert_releases(dialect: str) -> Any:
    stmt = insert_for(dialect, releases)
    return stmt.on_conflict_do_nothing(index_elements=["project_id", "version"])


@lru_cache(maxsize=2)
def _upsert_environments(dialect: str) -> Any:
    stmt = insert_for(dialect, project_environments)
    ex, t = stmt.excluded, project_environments.c
    return stmt.on_conflict_do_update(
        index_elements=["project_id", "name"],
        set_={
            "first_seen": case((ex.first_seen < t.first_seen, ex.first_seen), else_=t.first_seen),
            "last_seen": case((ex.last_seen > t.last_seen, ex.last_seen), else_=t.last_seen),
        },
    )


def release_first_seen(
    conn: Connection, project_id: int, versions: Iterable[str]
) -> dict[str, float]:
    wanted = sorted(set(versions))
    if not wanted:
        return {}
    query = select(releases.c.version, releases.c.created_at).where(
        releases.c.project_id == project_id, releases.c.version.in_(wanted)
    )
    return {str(v): float(t) for v, t in conn.execute(query)}


def recent_releases(conn: Connection, project_id: int, limit: int = 100) -> list[str]:
    """The most recent releases first (the "resolve in release" choices)."""
    query = (
        select(releases.c.version)
        .where(releases.c.project_id == project_id)
        .order_by(releases.c.created_at.desc(), releases.c.id.desc())
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
