"""Source map artifacts of a project on /api/v4: list a release's files, delete one
(docs/sourcemaps.md). Uploads go through sentry-cli and /api/0."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response
from pydantic import BaseModel

from tracebox.accounts.policy import Action
from tracebox.accounts.projects import ProjectAccess
from tracebox.api.context import Ctx, ErrorsReader, IdPath, project_for
from tracebox.api.timefmt import iso
from tracebox.errors import NotFound
from tracebox.store import artifacts
from tracebox.store.artifacts import ArtifactFile

router = APIRouter(tags=["source maps"])
ARTIFACTS = "/projects/{id}/error_tracking/artifacts"
MAX_LISTED = 1000
ReleasesAdmin = Annotated[ProjectAccess, Depends(project_for(Action.DELETE_RELEASES))]


class ArtifactOut(BaseModel):
    id: int
    release: str  # "" for files uploaded without a release (found by debug ID)
    dist: str
    url: str  # e.g. ~/static/app.min.js
    type: str  # minified_source, source_map, source
    debug_id: str | None
    sourcemap: str | None  # the map a minified file names
    sha1: str
    size: int  # bytes, uncompressed
    created_at: str

    @classmethod
    def of(cls, f: ArtifactFile) -> ArtifactOut:
        return cls(
            id=f.id,
            release=f.release,
            dist=f.dist,
            url=f.url,
            type=f.type,
            debug_id=f.debug_id,
            sourcemap=f.sourcemap,
            sha1=f.checksum,
            size=f.size,
            created_at=iso(f.created_at),
        )


@router.get(ARTIFACTS, response_model=list[ArtifactOut])
def list_artifacts(
    access: ErrorsReader,
    ctx: Ctx,
    release: Annotated[str, Query(max_length=255, pattern=r"^[^\x00]*$")] = "",
) -> list[ArtifactOut]:
    """The files of ``release`` (empty: those uploaded without a release), oldest first,
    at most 1000."""
    with ctx.db.read() as conn:
        found = artifacts.list_files(conn, access.project.id, release, limit=MAX_LISTED)
    return [ArtifactOut.of(f) for f in found]


@router.delete(ARTIFACTS + "/{artifact_id}", status_code=204)
def delete_artifact(artifact_id: IdPath, access: ReleasesAdmin, ctx: Ctx) -> Response:
    """Maintainer+. The file's bytes go once no other release or project names them."""
    with ctx.db.write() as conn:
        if not artifacts.delete_file(conn, access.project.id, artifact_id):
            raise NotFound("Artifact")
    return Response(status_code=204)
