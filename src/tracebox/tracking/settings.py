"""Error tracking settings of a project, as GitLab's settings API changes them."""

from __future__ import annotations

from sqlalchemy import Connection

from tracebox.errors import NotFound
from tracebox.models import ErrorTrackingSettings
from tracebox.store import Database, client_keys, projects


def get(conn: Connection, project_id: int) -> ErrorTrackingSettings:
    found = projects.get_settings(conn, project_id)
    if found is None:
        raise NotFound("Error Tracking Setting")
    return found


def save(
    conn: Connection, project_id: int, *, active: bool, integrated: bool | None, create: bool
) -> ErrorTrackingSettings:
    """PUT (``create``) upserts; PATCH needs an existing row (404 otherwise) and keeps
    ``integrated`` when not given. Turning the integrated backend on gives the project a
    client key if it has no active one (GitLab's ``after_save :create_client_key!``)."""
    current = projects.get_settings(conn, project_id)
    if current is None and not create:
        raise NotFound("Error Tracking Setting")
    if integrated is None:
        integrated = current.integrated if current is not None else True
    projects.put_settings(conn, project_id, active=active, integrated=integrated)
    if active and integrated and not client_keys.has_active(conn, project_id):
        client_keys.create(conn, project_id)
    return get(conn, project_id)


def get_existing(db: Database, project_id: int) -> ErrorTrackingSettings:
    """PATCH changes existing settings only (404 otherwise)."""
    with db.read() as conn:
        return get(conn, project_id)
