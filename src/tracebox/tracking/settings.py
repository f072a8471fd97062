"""Error tracking settings of a project, as GitLab's settings API changes them."""

from __future__ import annotations

from urllib.parse import urlsplit

from sqlalchemy import Connection

from tracebox.errors import InvalidParameter, NotFound
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


def set_gitlab_project_url(conn: Connection, project_id: int, raw: str) -> None:
    """Where the project's GitLab issues live; an empty value clears it. Only http(s)
    URLs: the details page shows linked issues as links."""
    url = raw.strip().rstrip("/")
    if url:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc or not url.isprintable():
            raise InvalidParameter("gitlab_project_url is invalid")
        if " " in url or parts.query or parts.fragment:
            raise InvalidParameter("gitlab_project_url is invalid")
    get(conn, project_id)  # 404 without settings
    projects.set_gitlab_project_url(conn, project_id, url or None)


def issue_url(settings: ErrorTrackingSettings, number: int) -> str | None:
    """The URL of GitLab issue ``number`` of the project, if its GitLab URL is known."""
    base = settings.gitlab_project_url
    return f"{base}/-/issues/{number}" if base else None


def get_existing(db: Database, project_id: int) -> ErrorTrackingSettings:
    """PATCH changes existing settings only (404 otherwise)."""
    with db.read() as conn:
        return get(conn, project_id)
