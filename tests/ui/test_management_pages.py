"""Settings, client keys, projects.json, members, tokens, projects and admin pages."""

from __future__ import annotations

import html
import re

import pytest

from tests.inprocess import Ui
from tracebox.models import AccessLevel, Project, User
from tracebox.store import accounts, client_keys, members, projects

SETTINGS = "/acme/web/-/settings/monitor"


@pytest.fixture
def owner(ui: Ui) -> User:
    user = ui.user("owner")
    ui.sign_in(user)
    return user


@pytest.fixture
def project(ui: Ui, owner: User) -> Project:
    return ui.project("acme/web", owner)


def test_settings_save_and_reload(ui: Ui, project: Project) -> None:
    page = ui.client.get(SETTINGS).text
    assert re.search(r'id="active" name="active" type="checkbox" value="1" checked', page)
    assert ui.post(SETTINGS, {"backend": "integrated"}, page=SETTINGS).status_code == 303
    with ui.db.read() as conn:
        saved = projects.get_settings(conn, project.id)
    assert saved is not None and not saved.active
    page = ui.client.get(SETTINGS).text
    assert "Your changes have been saved." in page
    assert not re.search(r'name="active" type="checkbox" value="1" checked', page)


def test_external_backend_validation_and_connection_message(ui: Ui, project: Project) -> None:
    bad = ui.post(
        SETTINGS, {"backend": "external", "api_url": "nope", "active": "1"}, page=SETTINGS
    )
    assert bad.status_code == 400 and "Api_url must be an http or https URL." in bad.text
    missing = ui.post(
        SETTINGS, {"backend": "external", "api_url": "https://sentry.io"}, page=SETTINGS
    )
    assert "Token is missing." in missing.text
    failed = ui.post(
        SETTINGS,
        {"backend": "external", "api_url": "https://sentry.invalid", "auth_token": "secret-token"},
        page=SETTINGS,
    )
    assert failed.status_code == 400
    assert "Connection failed. Check auth token and try again" in failed.text
    assert "secret-token" not in failed.text  # never sent back
    assert "Could not resolve the Sentry host" in failed.text  # the cause, named
    assert 'value="https://sentry.invalid"' in failed.text
    with ui.db.read() as conn:
        saved = projects.get_settings(conn, project.id)
    assert saved is not None and saved.integrated  # nothing was changed


def test_projects_json(ui: Ui, project: Project) -> None:
    url = "/acme/web/-/error_tracking/projects.json"
    r = ui.client.get(url, params={"api_host": "https://sentry.invalid", "token": "t"})
    assert r.status_code == 400 and r.headers["content-type"] == "application/json"
    assert r.json()["message"].startswith("Could not resolve the Sentry host 'sentry.invalid'")
    assert ui.client.get(url, params={"api_host": "ftp://x", "token": "t"}).json() == {
        "message": "api_url must be an http or https URL"
    }
    with ui.db.write() as conn:
        projects.update(conn, project.id, name=None, monitor_access_level="disabled")
    r = ui.client.get(url, params={"api_host": "https://sentry.io", "token": "t"})
    assert (r.status_code, r.json()) == (404, {"message": "404 Not Found"})


def test_client_keys_created_and_revoked(ui: Ui, project: Project) -> None:
    page = ui.client.get(SETTINGS).text
    assert "Show deprecated DSN (with secret key)" in page
    with ui.db.read() as conn:
        (first,) = client_keys.list_for_project(conn, project.id)
    assert f"{first.public_key}:{first.secret_key}@" in page  # the deprecated form
    assert ui.post(f"{SETTINGS}/client_keys", {}, page=SETTINGS).status_code == 303
    r = ui.post(f"{SETTINGS}/client_keys/{first.id}/revoke", {}, page=SETTINGS)
    assert r.status_code == 303
    with ui.db.read() as conn:
        keys = client_keys.list_for_project(conn, project.id)
    assert [k.id for k in keys] != [first.id] and len(keys) == 1
    assert (
        ui.post(f"{SETTINGS}/client_keys/{first.id}/revoke", {}, page=SETTINGS).status_code == 404
    )


def test_settings_need_a_maintainer(ui: Ui, project: Project) -> None:
    dev = ui.user("dev")
    ui.member(project, dev, AccessLevel.DEVELOPER)
    ui.sign_in(dev)
    assert ui.client.get(SETTINGS).status_code == 403
    assert ui.client.get("/acme/web/-/settings/general").status_code == 403
    page = ui.client.get("/acme/web/-/error_tracking").text
    assert 'href="/acme/web/-/settings/monitor"' not in page


def test_members_are_managed_under_the_owner_rules(ui: Ui, project: Project) -> None:
    ui.user("maya")
    ui.user("otto")
    page = "/acme/web/-/project_members"
    r = ui.post(page, {"username": "maya", "access_level": "40"}, page=page)
    assert r.status_code == 303
    assert "maya was added as Maintainer." in ui.client.get(page).text
    assert "There is no user 'ghost'." in html.unescape(
        ui.client.get(
            ui.post(page, {"username": "ghost", "access_level": "20"}, page=page).headers[
                "location"
            ]
        ).text
    )
    with ui.db.read() as conn:
        maya = accounts.get_by_username(conn, "maya")
        otto = accounts.get_by_username(conn, "otto")
    assert maya and otto
    ui.sign_in(maya)
    ui.post(page, {"username": "otto", "access_level": "50"}, page=page)
    assert "Only Owners can grant" in ui.client.get(page).text
    ui.post(page, {"username": "otto", "access_level": "30"}, page=page)
    ui.post(f"{page}/{otto.id}", {"access_level": "20"}, page=page)
    with ui.db.read() as conn:
        assert members.access_level(conn, project.id, otto.id) == AccessLevel.REPORTER
    ui.post(f"{page}/{otto.id}/remove", {}, page=page)
    with ui.db.read() as conn:
        assert members.access_level(conn, project.id, otto.id) is None
    ui.sign_in(otto)
    assert ui.client.get(page).status_code == 404  # no longer a member


def test_projects_list_and_create(ui: Ui, owner: User) -> None:
    assert "No projects yet" in ui.client.get("/projects").text
    r = ui.post("/projects/new", {"name": "Web Shop", "tracking": "1"}, page="/projects/new")
    assert r.headers["location"] == "/owner/web-shop/-/error_tracking"
    assert "Web Shop" in ui.client.get("/projects").text
    taken = ui.post("/projects/new", {"name": "Web Shop", "tracking": "1"}, page="/projects/new")
    assert taken.status_code == 400 and "Project path has already been taken." in taken.text
    bad = ui.post("/projects/new", {"name": "", "path": "x"}, page="/projects/new")
    assert "Name is invalid." in bad.text
    plain = ui.post("/projects/new", {"name": "Quiet"}, page="/projects/new")
    assert "Get started with error tracking" in ui.client.get(plain.headers["location"]).text


def test_personal_access_tokens(ui: Ui, owner: User) -> None:
    page = "/-/user_settings/personal_access_tokens"
    form = ui.client.get(page).text
    default = re.search(r'name="expires_at" type="date" value="(\d{4}-\d{2}-\d{2})"', form)
    assert default
    r = ui.post(
        page, {"name": "ci", "scopes": "read_api", "expires_at": default.group(1)}, page=page
    )
    assert r.status_code == 201
    token = re.search(r'value="(tbpat-[^"]+)"', r.text)
    assert token
    api = ui.client.get("/api/v4/user", headers={"PRIVATE-TOKEN": token.group(1)})
    assert api.status_code == 200 and api.json()["username"] == "owner"
    listing = ui.client.get(page).text
    assert token.group(1) not in listing and "ci" in listing
    too_far = ui.post(page, {"name": "x", "scopes": "api", "expires_at": "2999-01-01"}, page=page)
    assert too_far.status_code == 400 and "at most 365 days" in too_far.text
    no_scope = ui.post(page, {"name": "x"}, page=page)
    assert "Scopes is missing." in no_scope.text
    token_id = re.search(r"personal_access_tokens/(\d+)/revoke", listing)
    assert token_id
    ui.post(f"{page}/{token_id.group(1)}/revoke", {}, page=page)
    assert (
        ui.client.get("/api/v4/user", headers={"PRIVATE-TOKEN": token.group(1)}).status_code == 401
    )


def test_admin_users(ui: Ui, owner: User) -> None:
    assert ui.client.get("/admin/users").status_code == 403
    admin = ui.user("boss", admin=True)
    ui.sign_in(admin)
    assert "owner@example.com" in ui.client.get("/admin/users").text
    new = {
        "username": "neo",
        "email": "neo@example.com",
        "name": "Neo",
        "password": "long enough 1",
    }
    assert ui.post("/admin/users/new", new, page="/admin/users/new").status_code == 303
    again = ui.post("/admin/users/new", new, page="/admin/users/new")
    assert again.status_code == 409 or "already been taken" in again.text
    short = ui.post(
        "/admin/users/new",
        {**new, "username": "x2", "email": "x2@e.x", "password": "1"},
        page="/admin/users/new",
    )
    assert "Password must be 8 to 128 characters." in short.text
    with ui.db.read() as conn:
        neo = accounts.get_by_username(conn, "neo")
    assert neo
    ui.post(f"/admin/users/{neo.id}/block", {}, page="/admin/users")
    with ui.db.read() as conn:
        assert accounts.get(conn, neo.id).is_blocked  # type: ignore[union-attr]
    ui.post(f"/admin/users/{admin.id}/block", {}, page="/admin/users")
    assert "You cannot block or unblock yourself." in ui.client.get("/admin/users").text
    ui.post(f"/admin/users/{neo.id}/unblock", {}, page="/admin/users")
    with ui.db.read() as conn:
        assert not accounts.get(conn, neo.id).is_blocked  # type: ignore[union-attr]
