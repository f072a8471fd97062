"""Sentry's organizations and project slugs over Tracebox's project paths (no HTTP).

A project ``acme/web`` is project ``web`` of organization ``acme``; in a nested path
``acme/team/web`` the organization is ``acme/team``. sentry-cli cannot send a ``/``
inside a URL segment (it sends U+FFFD instead) and Sentry clients may send ``%2F``, so
both stand for ``/`` in an organization slug: ``SENTRY_ORG=acme/team`` works as is.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection

from tracebox.accounts import projects as project_access
from tracebox.accounts.policy import Action, Principal, effective_level, permits
from tracebox.accounts.projects import ProjectAccess
from tracebox.errors import InvalidParameter, NotFound
from tracebox.models import Project
from tracebox.store import members

MAX_VISIBLE_PROJECTS = 10_000  # an organization listing reads at most this many projects


def namespace(org: str) -> str:
    return org.replace("\ufffd", "/").replace("%2F", "/").replace("%2f", "/").strip("/")


def namespace_of(project: Project) -> str:
    return project.path.rpartition("/")[0] or project.path


def slug_of(project: Project) -> str:
    return project.path.rpartition("/")[2]


def visible_projects(conn: Connection, principal: Principal, org: str) -> list[Project]:
    """The organization's projects the principal can see; 404 when there is none."""
    wanted = namespace(org)
    member = None if principal.is_admin else principal.user.id
    found = [
        p
        for p in members.list_visible(conn, member, offset=0, limit=MAX_VISIBLE_PROJECTS)
        if namespace_of(p) == wanted
    ]
    if not found:
        raise NotFound("Organization")
    return found


def organizations(conn: Connection, principal: Principal) -> dict[str, list[Project]]:
    """Every namespace the principal sees a project in, with those projects."""
    member = None if principal.is_admin else principal.user.id
    orgs: dict[str, list[Project]] = {}
    for p in members.list_visible(conn, member, offset=0, limit=MAX_VISIBLE_PROJECTS):
        orgs.setdefault(namespace_of(p), []).append(p)
    return orgs


def resolve(
    conn: Connection, principal: Principal, org: str, project: str, action: Action
) -> ProjectAccess:
    """Project ``project`` (a slug, or the numeric id) of organization ``org``."""
    ref = project if project.isascii() and project.isdigit() else f"{namespace(org)}/{project}"
    access = project_access.resolve(conn, principal, ref, action)
    if namespace_of(access.project) != namespace(org):
        raise NotFound("Project")
    return access


def resolve_many(
    conn: Connection, principal: Principal, org: str, slugs: Sequence[str], action: Action
) -> list[ProjectAccess]:
    """Every named project, each allowed ``action``; 400 when no project is named."""
    if not slugs:
        raise InvalidParameter("projects is missing")
    unique = list(dict.fromkeys(slugs))
    return [resolve(conn, principal, org, slug, action) for slug in unique]


def permitted(
    conn: Connection, principal: Principal, org: str, action: Action
) -> list[ProjectAccess]:
    """The organization's visible projects on which the principal may ``action``."""
    found = []
    for p in visible_projects(conn, principal, org):
        level = members.access_level(conn, p.id, principal.user.id)

        effective = effective_level(principal, level)
        if effective is not None and permits(p, effective, action):
            found.append(ProjectAccess(p, effective))
    return found
