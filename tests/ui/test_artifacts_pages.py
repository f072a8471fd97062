"""The artifacts page of a release and the releases page: Reporters read, Maintainers
delete; XSS-laden release and file names stay text."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.inprocess import Ui
from tests.sourcemaps.bundles import MINIFIED, SOURCE_MAP
from tracebox.models import AccessLevel, Project, User
from tracebox.store import artifacts, releases
from tracebox.store.artifacts import NewFile

RELEASE = 'web@1<script>alert("x")</script>'
PAGE = "/acme/web/-/error_tracking/artifacts?release=" + quote(RELEASE)


@pytest.fixture
def owner(ui: Ui) -> User:
    return ui.user("owner")


@pytest.fixture
def project(ui: Ui, owner: User) -> Project:
    project = ui.project("acme/web", owner)
    with ui.db.write() as conn:
        artifacts.add_bundle(
            conn,
            project.id,
            checksum="c" * 40,
            bundle_id="",
            release=RELEASE,
            dist="",
            contents=[
                NewFile(
                    "~/static/app.min.js", "minified_source", MINIFIED, sourcemap="app.min.js.map"
                ),
                NewFile("~/static/<img src=x>.map", "source_map", SOURCE_MAP),
            ],
            now=1.0,
        )
        row = releases.ensure(conn, project.id, RELEASE, now=1.0)
        releases.add_deploy(
            conn,
            row.id,
            environment="production",
            name=None,
            url=None,
            date_started=None,
            date_finished=2.0,
        )
    return project


def test_reporters_read_maintainers_delete(ui: Ui, project: Project, owner: User) -> None:
    reporter = ui.user("reporter")
    ui.member(project, reporter, AccessLevel.REPORTER)
    ui.sign_in(reporter)
    page = ui.client.get(PAGE)
    assert page.status_code == 200
    assert "~/static/app.min.js" in page.text and "Delete" not in page.text
    with ui.db.read() as conn:
        file_id = artifacts.list_files(conn, project.id, RELEASE)[0].id
    refused = ui.post(
        f"/acme/web/-/error_tracking/artifacts/{file_id}/delete", {"release": RELEASE}, page=PAGE
    )
    assert refused.status_code == 403

    ui.client.post("/users/sign_out", data={"_csrf": ui.csrf("/projects")})
    ui.sign_in(owner)
    assert "Delete all artifacts" in ui.client.get(PAGE).text
    done = ui.post(
        f"/acme/web/-/error_tracking/artifacts/{file_id}/delete", {"release": RELEASE}, page=PAGE
    )
    assert done.status_code == 303
    with ui.db.read() as conn:
        assert [f.url for f in artifacts.list_files(conn, project.id, RELEASE)] == [
            "~/static/<img src=x>.map"
        ]
    ui.post("/acme/web/-/error_tracking/artifacts/delete", {"release": RELEASE}, page=PAGE)
    with ui.db.read() as conn:
        assert artifacts.list_files(conn, project.id, RELEASE) == []
        assert artifacts.project_bytes(conn, project.id) == 0


def test_names_are_escaped_and_releases_list_artifacts(
    ui: Ui, project: Project, owner: User
) -> None:
    ui.sign_in(owner)
    page = ui.client.get(PAGE).text
    assert "<script>alert" not in page and "&lt;script&gt;alert" in page
    assert "<img src=x>" not in page
    listing = ui.client.get("/acme/web/-/error_tracking/releases").text
    assert "&lt;script&gt;" in listing and "<script>alert" not in listing
    assert "2 files" in listing and "production" in listing
