"""Source map uploads as sentry-cli sends them, under /api/0 (docs/sourcemaps.md).

sentry-cli asks ``GET chunk-upload/`` for the upload options, posts its artifact
bundle in SHA-1-named chunks (multipart, ``file_gzip`` or ``file`` parts), then asks
``artifactbundle/assemble/`` to join them. Older CLIs post release files one by one
(``releases/{version}/files/``) or assemble them per release. Developer+ uploads.
"""

from __future__ import annotations

import time
import zlib
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request, Response
from starlette.datastructures import UploadFile

from tracebox.accounts import organizations as orgs
from tracebox.accounts.policy import Action, Principal
from tracebox.api import sentry_cli_shapes as shapes
from tracebox.api.context import Ctx, CurrentPrincipal
from tracebox.errors import (
    BadRequest,
    Conflict,
    Forbidden,
    InvalidParameter,
    NotFound,
    PayloadTooLarge,
)
from tracebox.models import Project
from tracebox.releases import validate_version, view
from tracebox.store import artifacts
from tracebox.symbolication import uploads
from tracebox.symbolication.uploads import UploadLimits

router = APIRouter()
Json = dict[str, Any]
MULTIPART_OVERHEAD_BYTES = 64 * 1024  # part headers and boundaries around the chunks
MAX_DIST_CHARS = 64  # artifact_files.dist
# Capabilities sentry-cli checks in `accept` (2.x); 3.x only uses artifact bundles.
ACCEPT = ["release_files", "artifact_bundles", "artifact_bundles_v2", "sources"]


def _writable(ctx: Ctx, principal: Principal, org: str) -> list[Project]:
    """The organization's projects the principal may upload to (403 when none)."""
    with ctx.db.read() as conn:
        allowed = orgs.permitted(conn, principal, org, Action.WRITE_RELEASES)
    if not allowed:
        raise Forbidden("")
    return [a.project for a in allowed]


@router.get("/organizations/{org}/chunk-upload/")
def chunk_upload_options(org: str, ctx: Ctx, principal: CurrentPrincipal) -> Json:
    with ctx.db.read() as conn:
        orgs.visible_projects(conn, principal, org)
    s = ctx.settings
    return {
        "url": f"{s.external_url.rstrip('/')}/api/0/organizations/{org}/chunk-upload/",
        "chunkSize": s.artifact_chunk_bytes,
        "chunksPerRequest": s.artifact_max_chunks_per_request,
        "maxFileSize": s.artifact_max_upload_bytes,
        "maxRequestSize": s.artifact_max_request_bytes,
        "concurrency": s.artifact_upload_concurrency,
        "hashAlgorithm": "sha1",
        "compression": ["gzip"],
        "accept": ACCEPT,
        "maxWait": 60,
    }


@router.post("/organizations/{org}/chunk-upload/")
async def upload_chunks(
    org: str, request: Request, ctx: Ctx, principal: CurrentPrincipal
) -> Response:
    """Keep each chunk under its SHA-1 (the part's file name), checked on receipt."""
    _writable(ctx, principal, org)
    s = ctx.settings
    length = int(request.headers.get("content-length") or 0)
    if length > s.artifact_max_request_bytes + MULTIPART_OVERHEAD_BYTES:
        raise PayloadTooLarge(
            f"a chunk upload request may be at most {s.artifact_max_request_bytes} bytes"
        )
    async with request.form(
        max_files=s.artifact_max_chunks_per_request,
        max_fields=s.artifact_max_chunks_per_request,
        max_part_size=s.artifact_chunk_bytes + MULTIPART_OVERHEAD_BYTES,
    ) as form:
        received = [
            (
                part.filename or "",
                _chunk(await part.read(), name == "file_gzip", s.artifact_chunk_bytes),
            )
            for name, part in form.multi_items()
            if isinstance(part, UploadFile) and name in ("file", "file_gzip")
        ]
    now = time.time()
    with ctx.db.write() as conn:
        # Chunks of uploads that were never assembled go after a while (indexed, cheap).
        artifacts.delete_expired_chunks(conn, before=now - s.artifact_chunk_ttl_hours * 3600)
        for claimed, data in received:
            if artifacts.sha1(data) != claimed.lower():
                raise BadRequest(f"chunk {claimed[:40]!r} does not match its SHA-1")
            artifacts.save_chunk(conn, data, now=now)
    return Response(status_code=200)


def _chunk(data: bytes, gzipped: bool, limit: int) -> bytes:
    if len(data) > limit + MULTIPART_OVERHEAD_BYTES:
        raise PayloadTooLarge(f"a chunk may be at most {limit} bytes")
    if not gzipped:
        if len(data) > limit:
            raise PayloadTooLarge(f"a chunk may be at most {limit} bytes")
        return data
    inflater = zlib.decompressobj(wbits=31)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as e:
        raise BadRequest("a file_gzip chunk is not gzip data") from e
    if len(out) > limit or inflater.unconsumed_tail:
        raise PayloadTooLarge(f"a chunk may be at most {limit} bytes")
    return out


def _assemble_body(body: Json) -> tuple[str, list[str]]:
    checksum = uploads.checksums([body.get("checksum")], "checksum")[0]
    return checksum, uploads.checksums(body.get("chunks", []), "chunks")


def _dist(value: Any) -> str:
    if value is None or value == "":
        return ""
    if not isinstance(value, str) or len(value) > MAX_DIST_CHARS or "\x00" in value:
        raise InvalidParameter(f"dist must be at most {MAX_DIST_CHARS} characters")
    return value


def _result(r: uploads.AssembleResult) -> Json:
    return {"state": r.state, "missingChunks": r.missing_chunks, "detail": r.detail}


@router.post("/organizations/{org}/artifactbundle/assemble/")
def assemble_bundle(
    org: str, ctx: Ctx, principal: CurrentPrincipal, body: Annotated[Json, Body()]
) -> Json:
    """Join an artifact bundle's chunks and store it for each named project."""
    checksum, chunks = _assemble_body(body)
    slugs = [p for p in body.get("projects") or [] if isinstance(p, str)]
    version = body.get("version")
    release = validate_version(version) if version else ""
    with ctx.db.read() as conn:
        accesses = orgs.resolve_many(conn, principal, org, slugs, Action.WRITE_RELEASES)
    result = uploads.assemble(
        ctx.db,
        UploadLimits.from_settings(ctx.settings),
        [a.project for a in accesses],
        checksum=checksum,
        chunks=chunks,
        release=release,
        dist=_dist(body.get("dist")),
        now=time.time(),
    )
    return _result(result)


@router.post("/organizations/{org}/releases/{version}/assemble/")
def assemble_release_files(
    org: str, version: str, ctx: Ctx, principal: CurrentPrincipal, body: Annotated[Json, Body()]
) -> Json:
    """The older chunked upload: a release bundle for every project of the release."""
    checksum, chunks = _assemble_body(body)
    projects = _writable(ctx, principal, org)
    with ctx.db.read() as conn:
        found = view(conn, projects, version)
    if found is None:
        raise NotFound("Release")
    result = uploads.assemble(
        ctx.db,
        UploadLimits.from_settings(ctx.settings),
        found.projects,
        checksum=checksum,
        chunks=chunks,
        release=version,
        dist="",
        now=time.time(),
    )
    return _result(result)


# --- legacy release files ---------------------------------------------------------------


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
        found = artifacts.list_files(conn, target.id, version, limit=10_000)
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
        dist = _dist(form.get("dist"))
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
        found = artifacts.get_file(conn, target.id, _file_id(file_id))
    if found is None or found.release != version:
        raise NotFound("File")
    return shapes.artifact(found)


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
        found = artifacts.get_file(conn, target.id, _file_id(file_id))
        if found is None or found.release != version:
            raise NotFound("File")
        artifacts.delete_file(conn, target.id, found.id)
    return Response(status_code=204)


def _file_id(value: str) -> int:
    if not (value.isascii() and value.isdigit()) or len(value) > 18:
        raise NotFound("File")
    return int(value)
