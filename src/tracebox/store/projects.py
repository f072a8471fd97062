"""Projects and their error tracking settings."""

from __future__ import annotations

import time

from sqlalchemy import Connection, Row, select

from tracebox.models import ErrorTrackingSettings, Project
from tracebox.store.tables import error_tracking_settings, projects


def _project(row: Row[tuple[object, ...]]) -> Project:
    m = row._mapping
    return Project(
        id=m["id"],
        path=m["path"],
        name=m["name"],
        monitor_access_level=m["monitor_access_level"],
        created_at=m["created_at"],
    )


def create(conn: Connection, path: str, name: str) -> Project:
    now = time.time()
    result = conn.execute(
        projects.insert().values(
            path=path, name=name, description="", monitor_access_level="enabled", created_at=now
        )
    )
    project_id = result.inserted_primary_key[0] if result.inserted_primary_key else None
    assert project_id is not None
    return Project(int(project_id), path, name, "enabled", now)


def get(conn: Connection, project_id: int) -> Project | None:
    row = conn.execute(select(projects).where(projects.c.id == project_id)).first()
    return _project(row) if row else None


def get_by_path(conn: Connection, path: str) -> Project | None:
    row = conn.execute(select(projects).where(projects.c.path == path)).first()
    return _project(row) if row else None


def list_all(conn: Connection) -> list[Project]:
    return [_project(r) for r in conn.execute(select(projects).order_by(projects.c.id))]


def get_settings(conn: Connection, project_id: int) -> ErrorTrackingSettings | None:
    t = error_tracking_settings
    row = conn.execute(select(t).where(t.c.project_id == project_id)).first()
    if row is None:
        return None
    m = row._mapping
    return ErrorTrackingSettings(
        project_id=m["project_id"],
        active=m["active"],
        integrated=m["integrated"],
        api_url=m["api_url"],
        project_name=m["project_name"],
        updated_at=m["updated_at"],
    )


def put_settings(conn: Connection, project_id: int, *, active: bool, integrated: bool) -> None:
    """Create or update the settings row (the integrated backend fields only)."""
    t = error_tracking_settings
    now = time.time()
    updated = conn.execute(
        t.update()
        .where(t.c.project_id == project_id)
        .values(active=active, integrated=integrated, updated_at=now)
    )
    if updated.rowcount == 0:
        conn.execute(
            t.insert().values(
                project_id=project_id, active=active, integrated=integrated, updated_at=now
            )
        )


def update(
    conn: Connection, project_id: int, *, name: str | None, monitor_access_level: str | None
) -> None:
    """Change the fields given (None leaves a field as it is)."""
    values = {"name": name, "monitor_access_level": monitor_access_level}
    changes = {k: v for k, v in values.items() if v is not None}
    if changes:
        conn.execute(projects.update().where(projects.c.id == project_id).values(**changes))
