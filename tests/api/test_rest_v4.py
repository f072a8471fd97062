"""/api/v4 behaviour: project refs, settings and keys as GitLab, GitLab's error shapes and
pagination headers, tokens and members."""

from __future__ import annotations

import datetime as dt
import time
from types import SimpleNamespace

import pytest

from tests.inprocess import Api
from tracebox.accounts import personal_tokens
from tracebox.models import AccessLevel, Project, User


@pytest.fixture
def owner(api: Api) -> User:
    return api.user("owner")


@pytest.fixture
def project(api: Api, owner: User) -> Project:
    return api.project("acme/web", owner, tracking=False)


def test_id_or_url_encoded_path(api: Api, owner: User, project: Project) -> None:
    token = api.token(owner)
    for ref in (str(project.id), "acme%2Fweb", "acme%2fweb"):
        r = api.call("GET", f"/api/v4/projects/{ref}", token)
        assert r.status_code == 200 and r.json()["id"] == project.id, ref
    for ref in ("acme%2Fnope", "99999", str(2**70), "a%0Ab", "%00"):
        r = api.call("GET", f"/api/v4/projects/{ref}", token)
        assert (r.status_code, r.json()) == (404, {"message": "404 Project Not Found"}), ref


def test_monitor_disabled_hides_error_tracking(api: Api, owner: User, project: Project) -> None:
    token = api.token(owner)
    r = api.call(
        "PUT", f"/api/v4/projects/{project.id}", token, json={"monitor_access_level": "disabled"}
    )
    assert r.json()["monitor_access_level"] == "disabled"
    for suffix in ("errors", "settings", "client_keys", "releases"):
        r = api.call("GET", f"/api/v4/projects/{project.id}/error_tracking/{suffix}", token)
        assert r.status_code == 404, suffix
    assert api.call("GET", f"/api/v4/projects/{project.id}", token).status_code == 200


def test_settings_as_gitlab(api: Api, owner: User, project: Project) -> None:
    token, url = api.token(owner), f"/api/v4/projects/{project.id}/error_tracking/settings"
    missing = {"message": "404 Error Tracking Setting Not Found"}
    assert api.call("GET", url, token).json() == missing
    assert api.call("PATCH", url, token, json={"active": True}).json() == missing
    r = api.call("PUT", url, token, json={"active": True})
    assert (r.status_code, r.json()) == (400, {"error": "integrated is missing"})
    r = api.call("PUT", url + "?active=true&integrated=true", token)
    assert r.json() == {
        "active": True,
        "project_name": None,
        "sentry_external_url": None,
        "api_url": None,
        "integrated": True,
        "gitlab_project_url": None,  # Tracebox's own (GitLab issue links)
    }
    keys = api.call("GET", f"/api/v4/projects/{project.id}/error_tracking/client_keys", token)
    assert len(keys.json()) == 1  # turning the integrated backend on created a key
    r = api.call("PATCH", url, token, json={})
    assert (r.status_code, r.json()) == (400, {"error": "active is missing"})
    r = api.call("PATCH", url + "?active=maybe", token)
    assert (r.status_code, r.json()) == (400, {"error": "active is invalid"})
    r = api.call("PATCH", url, token, json={"active": False})
    assert r.json()["active"] is False and r.json()["integrated"] is True


def test_client_keys_as_spec_4_1(api: Api, owner: User, project: Project) -> None:
    token, url = api.token(owner), "/api/v4/projects/acme%2Fweb/error_tracking/client_keys"
    created = [api.call("POST", url, token) for _ in range(3)]
    assert [r.status_code for r in created] == [201, 201, 201]
    key = created[0].json()
    assert set(key) == {"id", "active", "public_key", "sentry_dsn", "sentry_dsn_with_secret"}
    assert key["sentry_dsn"] == (
        f"http://{key['public_key']}@localhost:8000/api/v4/error_tracking/collector/{project.id}"
    )
    assert key["sentry_dsn_with_secret"].startswith(f"http://{key['public_key']}:")
    page = api.call("GET", url + "?per_page=2", token)
    assert [k["id"] for k in page.json()] == [created[0].json()["id"], created[1].json()["id"]]
    h = page.headers
    assert (h["X-Total"], h["X-Total-Pages"], h["X-Next-Page"], h["X-Page"]) == ("3", "2", "2", "1")
    assert 'rel="next"' in h["Link"] and "page=2" in h["Link"]
    assert api.call("GET", url + "?per_page=101", token).json() == {"error": "per_page is invalid"}
    deleted = api.call("DELETE", f"{url}/{key['id']}", token)
    assert deleted.status_code == 200 and deleted.json() == key
    again = api.call("DELETE", f"{url}/{key['id']}", token)
    assert (again.status_code, again.json()) == (404, {"message": "404 Client Key Not Found"})


def test_tokens_api(api: Api, owner: User, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tokens are issued at this moment: the default expiry and its cap are counted from
    # its UTC day, which a midnight between the requests and this test's own reading of
    # the date would otherwise move on by one.
    issued_at = time.time()
    monkeypatch.setattr(personal_tokens, "time", SimpleNamespace(time=lambda: issued_at))
    token = api.token(owner)
    r = api.call(
        "POST", "/api/v4/personal_access_tokens", token, json={"name": "ci", "scopes": ["read_api"]}
    )
    assert r.status_code == 201
    made = r.json()
    today = dt.datetime.fromtimestamp(issued_at, dt.UTC).date()
    year = (today + dt.timedelta(days=365)).isoformat()
    assert made["expires_at"] == year and made["token"].startswith("tbpat-")
    too_far = (dt.date.fromisoformat(year) + dt.timedelta(days=1)).isoformat()
    r = api.call(
        "POST",
        "/api/v4/personal_access_tokens",
        token,
        json={"name": "ci", "scopes": ["api"], "expires_at": too_far},
    )
    assert r.status_code == 400 and r.json()["error"].startswith("expires_at")
    r = api.call("POST", "/api/v4/projects", made["token"], json={"name": "x"})
    assert r.status_code == 403 and r.json()["error"] == "insufficient_scope"
    other = api.token(api.user("other"))
    assert len(api.call("GET", "/api/v4/personal_access_tokens", other).json()) == 1
    listed = api.call("GET", "/api/v4/personal_access_tokens", made["token"]).json()
    assert "token" not in listed[0] and listed[-1]["last_used_at"] is not None
    r = api.call("DELETE", f"/api/v4/personal_access_tokens/{made['id']}", token)
    assert r.status_code == 204
    assert api.call("GET", "/api/v4/user", made["token"]).status_code == 401


def test_members_and_owner_rules(api: Api, owner: User, project: Project) -> None:
    maintainer, dev = api.user("maint"), api.user("dev")
    api.member(project, maintainer, AccessLevel.MAINTAINER)
    url, token = f"/api/v4/projects/{project.id}/members", api.token(maintainer)
    r = api.call("POST", url, token, json={"user_id": dev.id, "access_level": 30})
    assert r.status_code == 201 and r.json()["access_level"] == 30
    r = api.call("POST", url, token, json={"user_id": dev.id, "access_level": 30})
    assert r.status_code == 409
    r = api.call("PUT", f"{url}/{dev.id}", token, json={"access_level": 50})
    assert r.status_code == 403  # only Owners grant Owner
    assert api.call("DELETE", f"{url}/{owner.id}", token).status_code == 403
    owner_token = api.token(owner)
    r = api.call("DELETE", f"{url}/{owner.id}", owner_token)
    assert r.status_code == 400  # the last Owner stays
    r = api.call("PUT", f"{url}/{dev.id}", token, json={"access_level": 15})
    assert (r.status_code, r.json()) == (400, {"error": "access_level is invalid"})
    members = api.call("GET", url, api.token(dev)).json()
    assert {m["username"]: m["access_level"] for m in members} == {
        "owner": 50,
        "maint": 40,
        "dev": 30,
    }


def test_projects_and_users(api: Api, owner: User) -> None:
    token = api.token(owner)
    r = api.call("POST", "/api/v4/projects", token, json={"name": "My App"})
    assert r.status_code == 201 and r.json()["path_with_namespace"] == "owner/my-app"
    assert api.call("POST", "/api/v4/projects", token, json={"name": "My App"}).status_code == 409
    assert [
        p["path_with_namespace"] for p in api.call("GET", "/api/v4/projects", token).json()
    ] == ["owner/my-app"]
    admin = api.token(api.user("admin", admin=True))
    body = {"username": "carol", "email": "carol@example.com", "password": "long password"}
    assert api.call("POST", "/api/v4/users", admin, json=body).status_code == 201
    assert api.call("POST", "/api/v4/users", admin, json=body).status_code == 409
    assert api.call("GET", "/api/v4/users", admin).headers["X-Total"] == "3"


def test_openapi_and_docs_are_public(api: Api) -> None:
    doc = api.client.get("/api/v4/openapi.json")
    assert doc.status_code == 200
    paths = doc.json()["paths"]
    assert "/projects/{id}/error_tracking/client_keys" in paths
    assert not any("422" in op["responses"] for p in paths.values() for op in p.values())
    assert doc.json()["servers"] == [{"url": "/api/v4"}]
    assert "swagger" in api.client.get("/api/v4/docs").text.lower()
    r = api.client.get("/api/v4/nothing-here")
    assert (r.status_code, r.json()) == (404, {"message": "404 Not Found"})
