"""Linking a project to an external Sentry server: the Connect button's project list and
saving the link (spec "Enabling an external backend"; GitLab ListProjectsService).

The API URL is stored as GitLab stores it, ``https://host/api/0/projects/<org>/<project>/``;
the user types only ``https://host`` (optionally with a path). A masked token (empty, or
only ``*``) means "the stored one", but only for the host it was saved for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from tracebox.errors import BadRequest, InvalidParameter
from tracebox.sentry_client import SentryError
from tracebox.sentry_client.safety import MAX_URL_LENGTH, check_url
from tracebox.store import Database, projects
from tracebox.store.projects import ExternalLink
from tracebox.tracking.external_backend import ExternalBackend

MAX_TOKEN_LENGTH = 512  # Sentry auth tokens are 64 hex or ~100 characters (sntrys_ ...)
MASKED = re.compile(r"\A\**\Z")
API_PREFIX = "/api/0/projects/"


@dataclass(frozen=True)
class ExternalProject:
    id: str
    name: str
    slug: str
    status: str
    organization_name: str
    organization_id: str
    organization_slug: str


def validate_api_url(api_url: str) -> str:
    """The external Sentry's base URL, ``https://<host>`` (http allowed for a local one)."""
    url = api_url.strip().rstrip("/")
    if not url:
        raise InvalidParameter("api_url is missing")
    if len(url) > MAX_URL_LENGTH or "\x00" in url:
        raise InvalidParameter("api_url must be an http or https URL")
    try:
        check_url(url)
    except SentryError as e:
        raise InvalidParameter("api_url must be an http or https URL") from e
    return url.split(API_PREFIX.rstrip("/"), 1)[0]  # a pasted full API URL works too


def validate_token(token: str) -> str:
    token = token.strip()
    if not token:
        raise InvalidParameter("token is missing")
    if len(token) > MAX_TOKEN_LENGTH or not token.isprintable() or " " in token:
        raise InvalidParameter("token is invalid")
    return token


def host_of(api_url: str) -> str:
    """``https://host/api/0/projects/org/proj/`` -> ``https://host``."""
    return api_url.split(API_PREFIX, 1)[0].rstrip("/")


def api_url_for(host: str, organization_slug: str, project_slug: str) -> str:
    org, project = quote(organization_slug, safe=""), quote(project_slug, safe="")
    return f"{host}{API_PREFIX}{org}/{project}/"


def resolve_token(
    backend: ExternalBackend, stored: ExternalLink | None, host: str, token: str | None
) -> str:
    """The typed token, or the stored one when the field is masked and the host is unchanged."""
    if token is not None and not MASKED.match(token.strip()):
        return validate_token(token)
    if stored is None or host_of(stored.api_url) != host:
        raise InvalidParameter("token is missing")
    return backend.cipher.decrypt(stored.encrypted_token)


def list_projects(backend: ExternalBackend, host: str, token: str) -> list[ExternalProject]:
    """The projects the token can read (``GET /api/0/projects/``)."""
    body = backend.client(host, token).get("projects/").body
    if not isinstance(body, list):
        raise SentryError("Sentry returned an unexpected answer: not a list of projects", "shape")
    return [_project(p) for p in body]


def _project(p: Any) -> ExternalProject:
    try:
        org = p["organization"]
        return ExternalProject(
            id=str(p["id"]),
            name=str(p["name"]),
            slug=str(p["slug"]),
            status=str(p.get("status", "")),
            organization_name=str(org["name"]),
            organization_id=str(org.get("id", "")),
            organization_slug=str(org["slug"]),
        )
    except (KeyError, TypeError, AttributeError) as e:
        raise SentryError(f"Sentry API response is missing keys: {e}", "shape") from e


def link(
    db: Database,
    backend: ExternalBackend,
    project_id: int,
    *,
    active: bool,
    api_host: str,
    token: str | None,
    organization_slug: str,
    project_slug: str,
) -> ExternalLink:
    """Check the connection, find the chosen project on the server, store the link.
    The Sentry calls happen outside the write transaction (a slow server holds no lock)."""
    host = validate_api_url(api_host)
    with db.read() as conn:
        stored = projects.get_external_link(conn, project_id)
    secret = resolve_token(backend, stored, host, token)
    found = list_projects(backend, host, secret)  # the connection first, as Connect
    if not project_slug:
        raise InvalidParameter("project is missing: press Connect and choose a project")
    chosen = next(
        (p for p in found if p.slug == project_slug and p.organization_slug == organization_slug),
        None,
    )
    if chosen is None:
        raise BadRequest(
            f'Project "{project_slug}" is no longer available. Select another project to continue.'
        )
    saved = ExternalLink(
        api_url=api_url_for(host, chosen.organization_slug, chosen.slug),
        encrypted_token=backend.cipher.encrypt(secret),
        organization_slug=chosen.organization_slug,
        organization_name=chosen.organization_name,
        project_slug=chosen.slug,
        project_name=chosen.name,
        external_project_id=chosen.id,
    )
    with db.write() as conn:
        projects.put_external_link(conn, project_id, active=active, link=saved)
    backend.cache.forget(project_id)
    return saved


def connect(
    db: Database, backend: ExternalBackend, project_id: int, api_host: str, token: str | None
) -> list[ExternalProject]:
    """The Connect button: the server's projects with the typed (or the stored) token."""
    host = validate_api_url(api_host)
    with db.read() as conn:
        stored = projects.get_external_link(conn, project_id)
    return list_projects(backend, host, resolve_token(backend, stored, host, token))
