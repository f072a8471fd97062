"""What sentry-cli calls under /api/0 besides uploads: auth info, organizations, their
projects, releases and deploys (docs/sourcemaps.md has the slug mapping).

Creating releases and deploys needs Developer+ on every project named; deleting a
release (with its artifacts) needs Maintainer+; reading needs Reporter+.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request, Response

from tracebox.accounts import auth
from tracebox.accounts import organizations as orgs
from tracebox.accounts.policy import Action, Principal
from tracebox.api import sentry_cli_shapes as shapes
from tracebox.api.context import Ctx, CurrentPrincipal
from tracebox.errors import NotFound
from tracebox.models import Project
from tracebox.releases import (
    ReleaseView,
    add_deploy,
    create,
    delete,
    list_views,
    parse_time,
    update,
    validate_version,
    view,
)

router = APIRouter()
Json = dict[str, Any]
MAX_RELEASES_LISTED = 1000  # sentry-cli `releases list` shows one page


@router.get("/")
def auth_info(request: Request, ctx: Ctx) -> Json:
    """Who the token belongs to (``sentry-cli info``); nulls without a token, as Sentry."""
    token = auth.token_from_headers(
        request.headers.get("PRIVATE-TOKEN"), request.headers.get("Authorization")
    )
    return shapes.auth_info(auth.authenticate(ctx.db, token) if token else None)


@router.get("/organizations/")
def list_organizations(ctx: Ctx, principal: CurrentPrincipal) -> list[Json]:
    with ctx.db.read() as conn:
        found = orgs.organizations(conn, principal)
    return [shapes.organization(ns, projects) for ns, projects in sorted(found.items())]


@router.get("/organizations/{org}/")
def get_organization(org: str, ctx: Ctx, principal: CurrentPrincipal) -> Json:
    with ctx.db.read() as conn:
        projects = orgs.visible_projects(conn, principal, org)
    return shapes.organization(orgs.namespace(org), projects)


@router.get("/organizations/{org}/projects/")
def list_projects(org: str, ctx: Ctx, principal: CurrentPrincipal) -> list[Json]:
    with ctx.db.read() as conn:
        return [shapes.project(p) for p in orgs.visible_projects(conn, principal, org)]


def _projects_of(ctx: Ctx, principal: Principal, org: str, action: Action) -> list[Project]:
    with ctx.db.read() as conn:
        return [a.project for a in orgs.permitted(conn, principal, org, action)]


def _release(ctx: Ctx, principal: Principal, org: str, version: str, action: Action) -> ReleaseView:
    """The version in the projects the principal can read; 403 when ``action`` is not
    allowed on one of them."""
    projects = _projects_of(ctx, principal, org, Action.READ_ERRORS)
    with ctx.db.read() as conn:
        found = view(conn, projects, version)
        if found is None:
            raise NotFound("Release")
        for p in found.projects:
            orgs.resolve(conn, principal, org, str(p.id), action)
    return found


@router.post("/organizations/{org}/releases/", status_code=201)
def new_release(
    org: str, ctx: Ctx, principal: CurrentPrincipal, body: Annotated[Json, Body()]
) -> Json:
    """``sentry-cli releases new VERSION``: the release in each named project."""
    version = validate_version(body.get("version"))
    slugs = body.get("projects") or []
    slugs = [s for s in slugs if isinstance(s, str)] if isinstance(slugs, list) else []
    with ctx.db.write() as conn:
        projects = [
            a.project for a in orgs.resolve_many(conn, principal, org, slugs, Action.WRITE_RELEASES)
        ]
        create(
            conn,
            projects,
            version,
            url=body.get("url") if isinstance(body.get("url"), str) else None,
            date_started=parse_time(body.get("dateStarted"), "dateStarted"),
            date_released=parse_time(body.get("dateReleased"), "dateReleased"),
            now=time.time(),
        )
        found = view(conn, projects, version)
    assert found is not None
    return shapes.release(found)


@router.get("/organizations/{org}/releases/")
def list_releases(org: str, ctx: Ctx, principal: CurrentPrincipal) -> list[Json]:
    projects = _projects_of(ctx, principal, org, Action.READ_ERRORS)
    with ctx.db.read() as conn:
        return [shapes.release(r) for r in list_views(conn, projects, limit=MAX_RELEASES_LISTED)]


@router.get("/projects/{org}/{project}/releases/")
def list_project_releases(
    org: str, project: str, ctx: Ctx, principal: CurrentPrincipal
) -> list[Json]:
    with ctx.db.read() as conn:
        access = orgs.resolve(conn, principal, org, project, Action.READ_ERRORS)
        found = list_views(conn, [access.project], limit=MAX_RELEASES_LISTED)
    return [shapes.release(r) for r in found]


@router.get("/organizations/{org}/releases/{version}/")
def get_release(org: str, version: str, ctx: Ctx, principal: CurrentPrincipal) -> Json:
    return shapes.release(_release(ctx, principal, org, version, Action.READ_ERRORS))


@router.put("/organizations/{org}/releases/{version}/")
def update_release(
    org: str, version: str, ctx: Ctx, principal: CurrentPrincipal, body: Annotated[Json, Body()]
) -> Json:
    """``sentry-cli releases finalize`` sets ``dateReleased``; also ``url`` and renames."""
    found = _release(ctx, principal, org, version, Action.WRITE_RELEASES)
    new_version = validate_version(body["version"]) if body.get("version") else None
    released = parse_time(body.get("dateReleased"), "dateReleased")
    url = body.get("url") if isinstance(body.get("url"), str) else None
    with ctx.db.write() as conn:
        current = update(conn, found, version=new_version, url=url, date_released=released)
        updated = view(conn, found.projects, current)
    assert updated is not None
    return shapes.release(updated)


@router.delete("/organizations/{org}/releases/{version}/", status_code=204)
def delete_release(org: str, version: str, ctx: Ctx, principal: CurrentPrincipal) -> Response:
    found = _release(ctx, principal, org, version, Action.DELETE_RELEASES)
    with ctx.db.write() as conn:
        delete(conn, found)
    return Response(status_code=204)


@router.get("/organizations/{org}/releases/{version}/deploys/")
def list_deploys(org: str, version: str, ctx: Ctx, principal: CurrentPrincipal) -> list[Json]:
    found = _release(ctx, principal, org, version, Action.READ_ERRORS)
    return [shapes.deploy(d) for d in found.deploys]


@router.post("/organizations/{org}/releases/{version}/deploys/", status_code=201)
def new_deploy(
    org: str, version: str, ctx: Ctx, principal: CurrentPrincipal, body: Annotated[Json, Body()]
) -> Json:
    """``sentry-cli deploys new -e ENV``: a deploy of the release to an environment."""
    found = _release(ctx, principal, org, version, Action.WRITE_RELEASES)
    with ctx.db.write() as conn:
        return shapes.deploy(add_deploy(conn, found, body, time.time()))


@router.get("/organizations/{org}/releases/{version}/commits/")
def list_commits(org: str, version: str, ctx: Ctx, principal: CurrentPrincipal) -> list[Json]:
    """Commits are not tracked; ``sentry-cli releases info`` reads an empty list."""
    _release(ctx, principal, org, version, Action.READ_ERRORS)
    return []
