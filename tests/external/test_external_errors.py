"""The errors REST API and UI pages on a project linked to the fake Sentry server."""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest

from tests.external.fake_sentry import TOKEN, FakeSentry
from tests.inprocess import Api, Ui
from tracebox.models import Project, User

pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
ERRORS = "/api/v4/projects/{id}/error_tracking/errors"
NEXT = re.compile(r'<[^>]*[?&]cursor=([^&>]+)[^>]*>; rel="next"')


def linked(client: Api | Ui, fake: FakeSentry) -> tuple[Project, User, str]:
    owner = client.user("owner")
    project = client.project("acme/web", owner)
    api = Api(client.client, client.db, client.settings)
    token = api.token(owner)
    body = {
        "active": True,
        "integrated": False,
        "api_host": fake.url,
        "token": TOKEN,
        "project": {"slug": "web", "organization_slug": "acme-org"},
    }
    r = api.call("PUT", f"/api/v4/projects/{project.id}/error_tracking/settings", token, json=body)
    assert r.status_code == 200, r.text
    return project, owner, token


def test_rest_list_pages_through_sentry_link_cursors(api: Api, fake_sentry: FakeSentry) -> None:
    project, _, token = linked(api, fake_sentry)
    seen: list[int] = []
    params: dict[str, str] = {"per_page": "10"}
    for _ in range(5):
        r = api.call("GET", ERRORS.format(id=project.id), token, params=params)
        assert r.status_code == 200, r.text
        seen += [e["id"] for e in r.json()]
        found = NEXT.search(r.headers.get("link", ""))
        if found is None:
            break
        params["cursor"] = unquote(found.group(1))
    assert len(seen) == 25 and len(set(seen)) == 25
    assert r.json()[0]["title"].startswith("ZeroDivisionError: fake error")


def test_rest_search_sort_and_status_reach_sentry(api: Api, fake_sentry: FakeSentry) -> None:
    project, _, token = linked(api, fake_sentry)
    params = {"search": "error 7", "sort": "frequency", "status": "unresolved"}
    r = api.call("GET", ERRORS.format(id=project.id), token, params=params)
    assert [e["title"] for e in r.json()] == ["ZeroDivisionError: fake error 7"]
    path = fake_sentry.requests[-1][1]
    assert "query=is%3Aunresolved+error+7" in path and "sort=freq" in path


def test_rest_details_resolve_and_list_again(api: Api, fake_sentry: FakeSentry) -> None:
    project, _, token = linked(api, fake_sentry)
    first = api.call("GET", ERRORS.format(id=project.id), token).json()
    assert len(first) == 20
    r = api.call("GET", ERRORS.format(id=project.id) + "/1003", token)
    assert r.status_code == 200, r.text
    details = r.json()
    assert details["events_count"] == 12
    frames = details["latest_event"]["stack_trace"]
    assert frames[0]["function"] == "handler" and frames[0]["lineno"] == 12
    put = api.call(
        "PUT", ERRORS.format(id=project.id) + "/1003", token, json={"status": "resolved"}
    )
    assert put.status_code == 200 and put.json()["status"] == "resolved"
    assert fake_sentry.issues["1003"]["status"] == "resolved"
    assert ("PUT", "/api/0/issues/1003/", f"Bearer {TOKEN}") in fake_sentry.requests
    unresolved = api.call("GET", ERRORS.format(id=project.id), token, params={"per_page": 100})
    assert len(unresolved.json()) == 24  # the cached list was forgotten


def test_an_issue_of_another_sentry_project_is_not_found(api: Api, fake_sentry: FakeSentry) -> None:
    project, _, token = linked(api, fake_sentry)
    fake_sentry.issues["1001"]["project"] = {"id": "99", "name": "Other", "slug": "other"}
    assert api.call("GET", ERRORS.format(id=project.id) + "/1001", token).status_code == 404
    assert api.call("GET", ERRORS.format(id=project.id) + "/999", token).status_code == 404


def test_sentry_failure_on_the_list_is_a_message_not_a_500(
    api: Api, fake_sentry: FakeSentry
) -> None:
    project, _, token = linked(api, fake_sentry)
    fake_sentry.issues["1001"]["id"] = "not-a-number"
    r = api.call("GET", ERRORS.format(id=project.id), token)
    assert r.status_code == 400 and "not numeric" in r.json()["message"]


def test_ui_list_details_and_resolve(ui: Ui, fake_sentry: FakeSentry) -> None:
    _, owner, _ = linked(ui, fake_sentry)
    ui.sign_in(owner)
    page = ui.client.get("/acme/web/-/error_tracking")
    assert page.status_code == 200 and "fake error 1" in page.text
    details = ui.client.get("/acme/web/-/error_tracking/1002")
    assert details.status_code == 200
    assert "return 1 / 0" in details.text and "fake error 2" in details.text
    r = ui.post(
        "/acme/web/-/error_tracking/1002/status",
        {"status": "resolved"},
        page="/acme/web/-/error_tracking/1002",
    )
    assert r.status_code in (302, 303)
    assert fake_sentry.issues["1002"]["status"] == "resolved"


def test_list_and_details_answers_are_cached_briefly(api: Api, fake_sentry: FakeSentry) -> None:
    project, _, token = linked(api, fake_sentry)
    for _ in range(3):
        assert api.call("GET", ERRORS.format(id=project.id), token).status_code == 200
        assert api.call("GET", ERRORS.format(id=project.id) + "/1004", token).status_code == 200
    issue_lists = [p for _, p, _ in fake_sentry.requests if "/issues/?" in p]
    details = [p for _, p, _ in fake_sentry.requests if p == "/api/0/issues/1004/"]
    assert len(issue_lists) == 1 and len(details) == 1


def test_ui_shows_a_sentry_failure_as_a_message(ui: Ui, fake_sentry: FakeSentry) -> None:
    _, owner, _ = linked(ui, fake_sentry)
    ui.sign_in(owner)
    fake_sentry.issues["1001"]["id"] = "broken"
    page = ui.client.get("/acme/web/-/error_tracking")
    assert page.status_code == 400
    assert "is not numeric" in page.text


def test_sentry_api_issue_of_a_linked_project(api: Api, fake_sentry: FakeSentry) -> None:
    """``/api/0/issues/{id}/`` routes through the project's source: an issue of the linked
    Sentry project is answered (and changed) there; others stay 404; strangers see none."""
    project, _, token = linked(api, fake_sentry)
    auth = {"Authorization": f"Bearer {token}"}
    issue = api.client.get("/api/0/issues/1003/", headers=auth)
    assert issue.status_code == 200, issue.text
    body = issue.json()
    assert body["id"] == "1003" and body["title"] == "ZeroDivisionError: fake error 3"
    assert body["project"]["id"] == str(project.id)
    latest = api.client.get("/api/0/issues/1003/events/latest/", headers=auth).json()
    assert latest["groupID"] == "1003"
    changed = api.client.put("/api/0/issues/1003/", headers=auth, json={"status": "resolved"})
    assert changed.json()["status"] == "resolved"
    assert fake_sentry.issues["1003"]["status"] == "resolved"
    assert api.client.get("/api/0/issues/999999/", headers=auth).status_code == 404
    stranger = api.token(api.user("stranger"))
    hidden = api.client.get("/api/0/issues/1003/", headers={"Authorization": f"Bearer {stranger}"})
    assert hidden.status_code == 404
