"""Legacy release files under /api/0, as sentry-cli 1.x and 2.x send them to servers
without artifact bundles: one multipart upload per file, listed, read and deleted by
release (docs/sourcemaps.md). Developer+ uploads and deletes; Reporter+ reads."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request, Response
from sqlalchemy import Connection
from starlette.datastructures import UploadFile

from tracebox.accounts import organizations as orgs
from tracebox.accounts.policy import Action, Principal
from tracebox.api import sentry_cli_shapes as shapes
from tracebox.api.context import Ctx, CurrentPrincipal
from tracebox.api.sentry_artifacts import dist_of
from tracebox.errors import Conflict, InvalidParameter, NotFound
from tracebox.models import Project
from tracebox.releases import view
from tracebox.store import artifacts
from tracebox.store.artifacts import ArtifactFile
from tracebox.symbolication import uploads
from tracebox.symbolication.uploads import UploadLimits

router = APIRouter()
Json = dict[str, Any]
MAX_FILES_LISTED = 10_000


def _release_project(
    ctx: Ctx, principal: Principal, org: str, project: str | None, version: str, action: Action
) -> Project:
    """The project a release file request is about: the named one, else the single
    project of the organization that has the release."""
    with ctx.db.read() as conn:
        if project is not None:
            access = orgs.resolve(conn, principal, org, project, action)
            found = view(conn, [access.project], version)
        else:
            found = view(
                conn, [a.project for a in orgs.permitted(conn, principal, org, action)], version
            )
    if found is None:
        raise NotFound("Release")
    if len(found.projects) > 1:
        raise InvalidParameter("project is missing: the release belongs to several projects")
    return found.projects[0]


@router.get("/projects/{org}/{project}/releases/{version}/files/")
@router.get("/organizations/{org}/releases/{version}/files/")
def list_release_files(
    org: str,
    version: str,
    request: Request,
    ctx: Ctx,
    principal: CurrentPrincipal,
    project: str | None = None,
) -> list[Json]:
    target = _release_project(ctx, principal, org, project, version, Action.READ_ERRORS)
    wanted = set(request.query_params.getlist("checksum"))
    with ctx.db.read() as conn:
        found = artifacts.list_files(conn, target.id, version, limit=MAX_FILES_LISTED)
    return [shapes.artifact(f) for f in found if not wanted or f.checksum in wanted]


@router.post("/projects/{org}/{project}/releases/{version}/files/", status_code=201)
@router.post("/organizations/{org}/releases/{version}/files/", status_code=201)
async def upload_release_file(
    org: str,
    version: str,
    request: Request,
    ctx: Ctx,
    principal: CurrentPrincipal,
    project: str | None = None,
) -> Json:
    """One file per request (multipart ``file``, ``name``, ``dist``, ``header``); 409
    when the release already has a file of that name, as Sentry."""
    target = _release_project(ctx, principal, org, project, version, Action.WRITE_RELEASES)
    s = ctx.settings
    async with request.form(
        max_files=1, max_fields=64, max_part_size=s.artifact_max_upload_bytes
    ) as form:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise InvalidParameter("file is missing")
        data = await upload.read()
        name = form.get("name") or f"~/{upload.filename or ''}"
        headers = dict(
            h.split(":", 1) for h in form.getlist("header") if isinstance(h, str) and ":" in h
        )
        dist = dist_of(form.get("dist"))
    stored = uploads.add_release_file(
        ctx.db,
        UploadLimits.from_settings(s),
        target,
        release=version,
        dist=dist,
        name=str(name),
        data=data,
        headers={k.strip(): v.strip() for k, v in headers.items()},
        now=time.time(),
    )
    if stored is None:
        raise Conflict("A file matching this name already exists for the given release")
    return shapes.artifact(stored)


@router.get("/projects/{org}/{project}/releases/{version}/files/{file_id}/")
@router.get("/organizations/{org}/releases/{version}/files/{file_id}/")
def get_release_file(
    org: str,
    version: str,
    file_id: str,
    ctx: Ctx,
    principal: CurrentPrincipal,
    project: str | None = None,
) -> Json:
    target = _release_project(ctx, principal, org, project, version, Action.READ_ERRORS)
    with ctx.db.read() as conn:
        return shapes.artifact(_release_file(conn, target, version, file_id))


@router.delete("/projects/{org}/{project}/releases/{version}/files/{file_id}/", status_code=204)
@router.delete("/organizations/{org}/releases/{version}/files/{file_id}/", status_code=204)
def delete_release_file(
    org: str,
    version: str,
    file_id: str,
    ctx: Ctx,
    principal: CurrentPrincipal,
    project: str | None = None,
) -> Response:
    """Developer+, as uploading: sentry-cli replaces a release file by deleting it first."""
    target = _release_project(ctx, principal, org, project, version, Action.WRITE_RELEASES)
    with ctx.db.write() as conn:
        artifacts.delete_file(conn, target.id, _release_file(conn, target, version, file_id).id)
    return Response(status_code=204)


def _release_file(conn: Connection, project: Project, version: str, file_id: str) -> ArtifactFile:
    """The release's file ``file_id``, else 404."""
    if not (file_id.isascii() and file_id.isdigit()) or len(file_id) > 18:
        raise NotFound("File")
    found = artifacts.get_file(conn, project.id, int(file_id))
    if found is None or found.release != version:
        raise NotFound("File")
    return found
