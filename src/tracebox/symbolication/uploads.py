"""Storing what sentry-cli uploads: chunked bundles and legacy release files (no HTTP).

``assemble`` answers sentry-cli's assemble request: ``not_found`` with the chunks still
missing, ``ok`` once the bundle is stored for every project, or ``error`` with a
sentence sentry-cli prints ("Failed to process uploaded files: <detail>"). Assembly
is done within the request, so no state has to survive between nodes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import Connection

from tracebox.config import Settings
from tracebox.errors import BadRequest, PayloadTooLarge
from tracebox.models import Project
from tracebox.store import Database, releases
from tracebox.store import artifacts as store
from tracebox.store.artifacts import ArtifactFile, NewFile
from tracebox.symbolication.bundle import (
    MAX_URL_CHARS,
    BadBundle,
    discover_debug_id,
    discover_sourcemap,
    normalize_debug_id,
    read_bundle,
)

SHA1 = re.compile(r"^[0-9a-f]{40}$")
MAX_CHUNKS_PER_ASSEMBLE = 100_000  # chunk checksums in one assemble request


@dataclass(frozen=True)
class UploadLimits:
    max_upload_bytes: int
    max_project_bytes: int

    @classmethod
    def from_settings(cls, settings: Settings) -> UploadLimits:
        return cls(settings.artifact_max_upload_bytes, settings.artifact_max_project_bytes)


@dataclass(frozen=True)
class AssembleResult:
    state: str  # "ok", "not_found" (chunks missing) or "error"
    missing_chunks: list[str] = field(default_factory=list)
    detail: str | None = None


def checksums(values: object, name: str) -> list[str]:
    """A list of lowercase SHA-1 hex strings, or 400 naming the field."""
    if not isinstance(values, list) or len(values) > MAX_CHUNKS_PER_ASSEMBLE:
        raise BadRequest(f"{name} must be a list of SHA-1 checksums")
    found = [v.lower() for v in values if isinstance(v, str) and SHA1.match(v.lower())]
    if len(found) != len(values):
        raise BadRequest(f"{name} must be a list of SHA-1 checksums")
    return found


def assemble(
    db: Database,
    limits: UploadLimits,
    projects: Sequence[Project],
    *,
    checksum: str,
    chunks: Sequence[str],
    release: str,
    dist: str,
    now: float,
) -> AssembleResult:
    """Join the chunks into a bundle and store its files for each project."""
    with db.read() as conn:
        done = all(
            store.find_bundle(conn, p.id, checksum, release=release, dist=dist) is not None
            for p in projects
        )
        if done:  # the same bundle again: nothing to upload (ArtifactBundlesV2)
            return AssembleResult("ok")
        missing = store.missing_chunks(conn, chunks)
        if missing:
            return AssembleResult("not_found", missing)
        size = store.chunk_sizes(conn, chunks) if chunks else 0
    if size > limits.max_upload_bytes:
        return AssembleResult("error", detail=_too_large(size, limits.max_upload_bytes))
    try:
        _store_bundle(db, limits, projects, checksum, chunks, release, dist, now)
    except (BadBundle, PayloadTooLarge) as e:
        return AssembleResult("error", detail=e.message)
    return AssembleResult("ok")


def _store_bundle(
    db: Database,
    limits: UploadLimits,
    projects: Sequence[Project],
    checksum: str,
    chunks: Sequence[str],
    release: str,
    dist: str,
    now: float,
) -> None:
    with db.write() as conn:
        data = store.join_chunks(conn, chunks)
        if store.sha1(data) != checksum:
            raise BadBundle("the uploaded chunks do not add up to the bundle's checksum")
        bundle = read_bundle(data, max_bytes=limits.max_upload_bytes)
        release = release or bundle.attributes.get("release", "")
        dist = dist or bundle.attributes.get("dist", "")
        contents = [NewFile(f.url, f.type, f.data, f.debug_id, f.sourcemap) for f in bundle.files]
        for project in projects:
            _check_quota(conn, limits, project, [f.data for f in contents])
            store.add_bundle(
                conn,
                project.id,
                checksum=checksum,
                bundle_id=bundle.bundle_id,
                release=release,
                dist=dist,
                contents=contents,
                now=now,
            )
            if release:
                releases.ensure(conn, project.id, release, now=now)
        store.delete_chunks(conn, chunks)


def _check_quota(
    conn: Connection, limits: UploadLimits, project: Project, data: list[bytes]
) -> None:
    used = store.project_bytes(conn, project.id)
    added = store.new_bytes(conn, project.id, data)
    if added and used + added > limits.max_project_bytes:
        raise PayloadTooLarge(
            f"artifact storage of project {project.path} is full: {used} of "
            f"{limits.max_project_bytes} bytes used, this upload adds {added}; delete old "
            "releases or raise TRACEBOX_ARTIFACT_MAX_PROJECT_BYTES"
        )


def _too_large(size: int, limit: int) -> str:
    return f"the upload is {size} bytes, more than the limit of {limit} bytes"


def add_release_file(
    db: Database,
    limits: UploadLimits,
    project: Project,
    *,
    release: str,
    dist: str,
    name: str,
    data: bytes,
    headers: dict[str, str],
    now: float,
) -> ArtifactFile | None:
    """A legacy release file (``sentry-cli`` 1.x and 2.x without chunked uploads); None
    when the release already holds a file of that name (sentry-cli expects 409)."""
    if not name or len(name) > MAX_URL_CHARS:
        raise BadRequest(f"name must be 1 to {MAX_URL_CHARS} characters")
    if len(data) > limits.max_upload_bytes:
        raise PayloadTooLarge(_too_large(len(data), limits.max_upload_bytes))
    kind = file_type(name, data)
    lowered = {k.lower(): v for k, v in headers.items()}
    sourcemap = lowered.get("sourcemap") or lowered.get("x-sourcemap")
    if sourcemap is None and kind == "minified_source":
        sourcemap = discover_sourcemap(data)
    debug_id = normalize_debug_id(lowered.get("debug-id")) or discover_debug_id(kind, data)
    if sourcemap is not None and len(sourcemap) > MAX_URL_CHARS:
        sourcemap = None  # an inline data: map; the digest reads it from the file
    new = NewFile(name, kind, data, debug_id, sourcemap)
    with db.write() as conn:
        _check_quota(conn, limits, project, [data])
        releases.ensure(conn, project.id, release, now=now)
        return store.add_release_file(conn, project.id, new, release=release, dist=dist, now=now)


def file_type(name: str, data: bytes) -> str:
    """What a legacy release file is, from its name and first bytes (they carry no type)."""
    path = name.partition("?")[0].lower()
    if path.endswith(".map") or (data[:1] == b"{" and b'"mappings"' in data[:4096]):
        return "source_map"
    if path.endswith((".js", ".mjs", ".cjs", ".jsbundle", ".bundle")):
        return "minified_source"
    return "source"
