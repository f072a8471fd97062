"""/projects and /projects/:id/members."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from tracebox.accounts import membership
from tracebox.accounts import projects as project_service
from tracebox.api.context import (
    Ctx,
    CurrentPrincipal,
    IdPath,
    MembersAdmin,
    MembersReader,
    ProjectAdmin,
    ProjectReader,
)
from tracebox.api.pagination import PagingParams, offset_headers
from tracebox.api.problems import CONFLICT_RESPONSE
from tracebox.api.schemas import (
    MemberIn,
    MemberOut,
    MemberUpdate,
    ProjectIn,
    ProjectOut,
    ProjectUpdate,
)
from tracebox.store import members, projects

router = APIRouter(tags=["projects"])


@router.get("/projects", response_model=list[ProjectOut])
def list_projects(
    request: Request,
    response: Response,
    ctx: Ctx,
    principal: CurrentPrincipal,
    paging: PagingParams,
) -> list[ProjectOut]:
    """Projects you are a member of (admins: every project)."""
    member = None if principal.is_admin else principal.user.id
    with ctx.db.read() as conn:
        total = members.count_visible(conn, member)
        found = members.list_visible(conn, member, offset=paging.offset, limit=paging.per_page)
    offset_headers(request, response, paging, total)
    return [ProjectOut.of(p) for p in found]


@router.post("/projects", response_model=ProjectOut, status_code=201, responses=CONFLICT_RESPONSE)
def create_project(body: ProjectIn, ctx: Ctx, principal: CurrentPrincipal) -> ProjectOut:
    """Create a project; you become its Owner. A ``path`` without a slash goes under your
    username (``alice/web``); without ``path`` it is derived from ``name``."""
    with ctx.db.write() as conn:
        project = project_service.create(
            conn, principal, name=body.name, path=body.path, monitor=body.monitor_access_level
        )
    return ProjectOut.of(project)


@router.get("/projects/{id}", response_model=ProjectOut)
def get_project(access: ProjectReader) -> ProjectOut:
    return ProjectOut.of(access.project)


@router.put("/projects/{id}", response_model=ProjectOut)
def update_project(body: ProjectUpdate, access: ProjectAdmin, ctx: Ctx) -> ProjectOut:
    """Rename the project or turn its Monitor feature (error tracking) on or off
    (Maintainer+). ``monitor_access_level: disabled`` hides error tracking (404)."""
    name = project_service.validate_name(body.name) if body.name is not None else None
    with ctx.db.write() as conn:
        projects.update(
            conn, access.project.id, name=name, monitor_access_level=body.monitor_access_level
        )
        project = projects.get(conn, access.project.id)
    assert project is not None
    return ProjectOut.of(project)


@router.get("/projects/{id}/members", response_model=list[MemberOut])
def list_members(
    request: Request, response: Response, access: MembersReader, ctx: Ctx, paging: PagingParams
) -> list[MemberOut]:
    project_id = access.project.id
    with ctx.db.read() as conn:
        total = members.count(conn, project_id)
        found = members.list_page(conn, project_id, offset=paging.offset, limit=paging.per_page)
    offset_headers(request, response, paging, total)
    return [MemberOut.of(m) for m in found]


@router.post(
    "/projects/{id}/members", response_model=MemberOut, status_code=201, responses=CONFLICT_RESPONSE
)
def add_member(body: MemberIn, access: MembersAdmin, ctx: Ctx) -> MemberOut:
    """Add a member (Maintainer+; only Owners grant Owner). 409 if already a member."""
    level = membership.access_level(body.access_level)
    with ctx.db.write() as conn:
        return MemberOut.of(membership.add(conn, access, body.user_id, level))


@router.put("/projects/{id}/members/{user_id}", response_model=MemberOut)
def update_member(user_id: IdPath, body: MemberUpdate, access: MembersAdmin, ctx: Ctx) -> MemberOut:
    level = membership.access_level(body.access_level)
    with ctx.db.write() as conn:
        return MemberOut.of(membership.update(conn, access, user_id, level))


@router.delete("/projects/{id}/members/{user_id}", status_code=204, response_class=Response)
def remove_member(user_id: IdPath, access: MembersAdmin, ctx: Ctx) -> Response:
    """Remove a member. A project keeps at least one Owner."""
    with ctx.db.write() as conn:
        membership.remove(conn, access, user_id)
    return Response(status_code=204)
