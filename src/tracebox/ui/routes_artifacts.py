"""Source map artifacts of a release: files, sizes, debug IDs and upload times, for
Reporters and above; Maintainers delete a file or every artifact of the release.

The release is a query parameter (``?release=web%401.2``): release names may hold any
character; an empty one lists the files uploaded without a release (debug IDs only).
"""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.responses import Response

from tracebox.accounts.policy import Action
from tracebox.errors import NotFound
from tracebox.releases import MAX_VERSION_CHARS
from tracebox.store import artifacts
from tracebox.store import releases as release_store
from tracebox.ui.links import project_url
from tracebox.ui.web import Req

MAX_FILES_SHOWN = 1000  # a release with more files shows the first ones (and says so)


def artifacts_url(path: str, release: str) -> str:
    return project_url(path, "error_tracking/artifacts") + "?" + urlencode({"release": release})


def _release(value: str) -> str:
    if len(value) > MAX_VERSION_CHARS or "\x00" in value:
        raise NotFound("Release")
    return value


def index(r: Req, project: str) -> Response:
    access = r.project(project, Action.READ_ERRORS)
    release = _release(r.query("release"))
    with r.db.read() as conn:
        found = artifacts.list_files(conn, access.project.id, release, limit=MAX_FILES_SHOWN + 1)
        record = release_store.get(conn, access.project.id, release) if release else None
        deploys = release_store.list_deploys(conn, [record.id]) if record else []
        stored = artifacts.project_bytes(conn, access.project.id)
    return r.render(
        "artifacts.html",
        access=access,
        release=release,
        record=record,
        deploys=deploys,
        files=found[:MAX_FILES_SHOWN],
        more=len(found) > MAX_FILES_SHOWN,
        total_bytes=sum(f.size for f in found[:MAX_FILES_SHOWN]),
        project_bytes=stored,
    )


def delete_file(r: Req, project: str, file_id: int) -> Response:
    access = r.project(project, Action.DELETE_RELEASES)
    release = _release(r.form.get("release"))
    with r.db.write() as conn:
        found = artifacts.get_file(conn, access.project.id, file_id)
        if found is None or found.release != release:
            raise NotFound("Artifact")
        artifacts.delete_file(conn, access.project.id, file_id)
    r.flash("notice", f"{found.url} was deleted.")
    return r.redirect(artifacts_url(access.project.path, release))


def delete_all(r: Req, project: str) -> Response:
    access = r.project(project, Action.DELETE_RELEASES)
    release = _release(r.form.get("release"))
    with r.db.write() as conn:
        removed = artifacts.delete_release_artifacts(conn, access.project.id, release)
    r.flash("notice", f"{removed} artifact{'' if removed == 1 else 's'} deleted.")
    return r.redirect(artifacts_url(access.project.path, release))
