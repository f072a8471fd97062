"""First walk: authentication, a project, settings, keys, errors."""

from __future__ import annotations

from tests.inprocess import Api, exception_event


def test_user_and_project_flow(api: Api) -> None:
    alice = api.user("alice")
    token = api.token(alice)
    r = api.call("GET", "/api/v4/user", token)
    assert r.status_code == 200, r.text
    assert r.json()["username"] == "alice"
    r = api.call("POST", "/api/v4/projects", token, json={"name": "Web", "path": "acme/web"})
    assert r.status_code == 201, r.text
    project = r.json()
    assert project["path_with_namespace"] == "acme/web"
    r = api.call("GET", "/api/v4/projects/acme%2Fweb", token)
    assert r.status_code == 200, r.text
    assert r.json()["id"] == project["id"]
    r = api.call("GET", "/api/v4/projects/acme%2Fweb/error_tracking/settings", token)
    assert r.status_code == 404
    assert r.json() == {"message": "404 Error Tracking Setting Not Found"}
    r = api.call(
        "PUT",
        "/api/v4/projects/acme%2Fweb/error_tracking/settings?active=true&integrated=true",
        token,
    )
    assert r.status_code == 200, r.text
    r = api.call("GET", f"/api/v4/projects/{project['id']}/error_tracking/client_keys", token)
    assert r.status_code == 200, r.text
    assert len(r.json()) == 1
    assert r.headers["X-Total"] == "1"


def test_errors_flow(api: Api) -> None:
    alice = api.user("alice")
    token = api.token(alice)
    p = api.project("acme/web", alice)
    api.events(p, exception_event(), exception_event("KeyError", "x"))
    r = api.call("GET", f"/api/v4/projects/{p.id}/error_tracking/errors", token)
    assert r.status_code == 200, r.text
    errors = r.json()
    assert len(errors) == 2
    assert len(errors[0]["frequency"]) == 24
    eid = errors[0]["id"]
    r = api.call("GET", f"/api/v4/projects/{p.id}/error_tracking/errors/{eid}", token)
    assert r.status_code == 200, r.text
    body = r.json()
    assert len(body["frequency_30d"]) == 30
    assert body["latest_event"]["stack_trace"]
    r = api.call("GET", "/api/0/projects/acme/web/issues/", token)
    assert r.status_code == 200, r.text
    assert 'results="false"' in r.headers["Link"]
