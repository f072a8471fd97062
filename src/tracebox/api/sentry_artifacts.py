"""Source map uploads as sentry-cli sends them, under /api/0 (docs/sourcemaps.md).

sentry-cli asks ``GET chunk-upload/`` for the upload options, posts its artifact
bundle in SHA-1-named chunks (multipart, ``file_gzip`` or ``file`` parts), then asks
``artifactbundle/assemble/`` to join them. Older CLIs assemble release files per release
(``releases/{version}/assemble/``) or post them one by one (``sentry_release_files``).
Developer+ uploads.
"""

from __future__ import annotations

import time
import zlib
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request, Response
from starlette.datastructures import UploadFile

from tracebox.accounts import organizations as orgs
from tracebox.accounts.policy import Action, Principal
from tracebox.api.context import Ctx, CurrentPrincipal
from tracebox.errors import (
    BadRequest,
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


def dist_of(value: Any) -> str:
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
        dist=dist_of(body.get("dist")),
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
