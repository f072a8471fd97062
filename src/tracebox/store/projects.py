"""Projects and their error tracking settings."""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass

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


def bump_config(conn: Connection, project_id: int) -> None:
    """Say that a setting the digest or ingest reads changed (call it in the transaction
    that changes it): every node's digest reloads the project's configuration before its
    next batch (digest/config.py)."""
    conn.execute(
        projects.update()
        .where(projects.c.id == project_id)
        .values(config_version=projects.c.config_version + 1)
    )


def config_versions(conn: Connection, project_ids: Collection[int]) -> dict[int, int]:
    """``projects.config_version`` of each project that exists among ``project_ids``."""
    if not project_ids:
        return {}
    query = select(projects.c.id, projects.c.config_version).where(
        projects.c.id.in_(sorted(project_ids))
    )
    return {int(pid): int(version) for pid, version in conn.execute(query)}


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
        gitlab_project_url=m["gitlab_project_url"],
    )


def set_gitlab_project_url(conn: Connection, project_id: int, url: str | None) -> None:
    t = error_tracking_settings
    conn.execute(t.update().where(t.c.project_id == project_id).values(gitlab_project_url=url))


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


@dataclass(frozen=True)
class ExternalLink:
    """A project's link to an external Sentry project (the token stays encrypted)."""

    api_url: str  # https://host/api/0/projects/<org>/<project>/
    encrypted_token: str
    organization_slug: str
    organization_name: str
    project_slug: str
    project_name: str
    external_project_id: str

    def __repr__(self) -> str:  # keep even the ciphertext out of logs and tracebacks
        return f"ExternalLink({self.api_url!r}, project_id={self.external_project_id!r})"


def get_external_link(conn: Connection, project_id: int) -> ExternalLink | None:
    t = error_tracking_settings
    row = conn.execute(select(t).where(t.c.project_id == project_id)).first()
    if row is None or not row._mapping["api_url"] or not row._mapping["encrypted_token"]:
        return None
    m = row._mapping
    return ExternalLink(
        api_url=m["api_url"],
        encrypted_token=m["encrypted_token"],
        organization_slug=m["external_organization_slug"] or "",
        organization_name=m["organization_name"] or "",
        project_slug=m["external_project_slug"] or "",
        project_name=m["project_name"] or "",
        external_project_id=m["external_project_id"] or "",
    )


def linked_to_sentry(conn: Connection, limit: int) -> list[int]:
    """Projects whose active backend is a linked external Sentry server (by id)."""
    t = error_tracking_settings
    query = (
        select(t.c.project_id)
        .where(t.c.active, t.c.integrated.is_(False), t.c.api_url.is_not(None))
        .order_by(t.c.project_id)
        .limit(limit)
    )
    return [int(pid) for pid in conn.execute(query).scalars()]


def put_external_link(
    conn: Connection, project_id: int, *, active: bool, link: ExternalLink
) -> None:
    """Select the external backend and store its link (creating the settings row)."""
    put_settings(conn, project_id, active=active, integrated=False)
    t = error_tracking_settings
    conn.execute(
        t.update()
        .where(t.c.project_id == project_id)
        .values(
            api_url=link.api_url,
            encrypted_token=link.encrypted_token,
            organization_name=link.organization_name,
            external_organization_slug=link.organization_slug,
            project_name=link.project_name,
            external_project_slug=link.project_slug,
            external_project_id=link.external_project_id,
        )
    )
