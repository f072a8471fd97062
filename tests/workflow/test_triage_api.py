"""Assignees, comments, bulk changes and "My errors" through /api/v4, and the
Sentry-shaped fields on /api/0 (what GitLab's Sentry client reads and sends)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pytest

from tests.inprocess import Api, exception_event
from tracebox.config import Settings
from tracebox.models import AccessLevel, Project, User


@dataclass
class Team:
    api: Api
    project: Project
    tokens: dict[str, str]
    users: dict[str, User]
    ids: list[int]

    def url(self, suffix: str = "") -> str:
        return f"/api/v4/projects/{self.project.id}/error_tracking/errors{suffix}"

    def call(self, who: str, method: str, path: str, **kw: Any) -> Any:
        return self.api.call(method, path, self.tokens[who], **kw)


@pytest.fixture
def team(api: Api) -> Team:
    owner = api.user("owner")
    project = api.project("acme/web", owner)
    users, tokens = {"owner": owner}, {"owner": api.token(owner)}
    for name, level in (
        ("guest", AccessLevel.GUEST),
        ("reporter", AccessLevel.REPORTER),
        ("developer", AccessLevel.DEVELOPER),
        ("maintainer", AccessLevel.MAINTAINER),
    ):
        users[name] = api.user(name)
        api.member(project, users[name], level)
        tokens[name] = api.token(users[name])
    users["stranger"] = api.user("stranger")
    now = time.time()
    api.events(project, *[exception_event(f"Error{i}", "v", timestamp=now - i) for i in range(5)])
    found = api.call("GET", f"/api/v4/projects/{project.id}/error_tracking/errors", tokens["owner"])
    return Team(api, project, tokens, users, sorted(e["id"] for e in found.json()))


def test_assign_to_members_only(team: Team) -> None:
    e = team.url(f"/{team.ids[0]}")
    r = team.call("developer", "PUT", e, json={"assignee_id": team.users["reporter"].id})
    assert r.status_code == 200 and r.json()["assignee"]["username"] == "reporter", r.text
    for who in ("guest", "stranger"):
        r = team.call("developer", "PUT", e, json={"assignee_id": team.users[who].id})
        assert r.status_code == 400
        assert r.json() == {
            "error": "assignee_id is invalid: not a Reporter+ member of this project"
        }
    r = team.call("reporter", "PUT", e, json={"assignee_id": team.users["reporter"].id})
    assert r.status_code == 403  # assigning is a change: Developer+
    r = team.call("developer", "PUT", e, json={"assignee_id": None})
    assert r.json()["assignee"] is None
    kinds = [a["type"] for a in team.call("reporter", "GET", e + "/activity").json()]
    assert kinds == ["assigned", "unassigned"]


def test_comments_author_edits_maintainers_delete(team: Team) -> None:
    notes = team.url(f"/{team.ids[0]}/comments")
    r = team.call("reporter", "POST", notes, json={"body": "Seen in **prod** only"})
    assert r.status_code == 201, r.text
    note = r.json()
    assert (note["type"], note["body"], note["user"]["username"]) == (
        "note",
        "Seen in **prod** only",
        "reporter",
    )
    assert team.call("guest", "POST", notes, json={"body": "x"}).status_code == 403
    mine = f"{notes}/{note['id']}"
    r = team.call("developer", "PUT", mine, json={"body": "hijacked"})
    assert r.json() == {"message": "403 Forbidden"}  # not the author
    r = team.call("reporter", "PUT", mine, json={"body": "Seen in prod and staging"})
    assert r.status_code == 200 and r.json()["updated_at"] is not None
    assert team.call("developer", "DELETE", mine).status_code == 403
    assert team.call("reporter", "DELETE", mine).status_code == 403
    assert team.call("maintainer", "DELETE", mine).status_code == 204
    assert team.call("maintainer", "DELETE", mine).status_code == 404
    other_error = team.url(f"/{team.ids[1]}/comments/{note['id']}")
    assert team.call("reporter", "PUT", other_error, json={"body": "x"}).status_code == 404


def test_comment_length_at_and_past_the_limit(team: Team, settings: Settings) -> None:
    notes = team.url(f"/{team.ids[0]}/comments")
    limit = settings.comment_max_chars
    assert team.call("reporter", "POST", notes, json={"body": "x" * limit}).status_code == 201
    r = team.call("reporter", "POST", notes, json={"body": "x" * (limit + 1)})
    assert (r.status_code, r.json()) == (400, {"error": f"body is too long (at most {limit})"})
    r = team.call("reporter", "POST", notes, json={"body": "   "})
    assert (r.status_code, r.json()) == (400, {"error": "body is empty"})


def test_bulk_by_ids_and_by_query(team: Team) -> None:
    some = team.ids[:2]
    r = team.call("developer", "PUT", team.url(), json={"ids": some, "status": "ignored"})
    assert r.json() == {"changed": 2, "batches": 1}, r.text
    r = team.call(
        "developer",
        "PUT",
        team.url(),
        json={"query": "is:unresolved Error*", "assignee_id": team.users["developer"].id},
    )
    assert r.json() == {"changed": 3, "batches": 1}
    mine = team.call("developer", "GET", "/api/v4/error_tracking/assigned_errors").json()
    assert sorted(e["id"] for e in mine) == team.ids[2:]
    assert {e["project_path"] for e in mine} == {"acme/web"}
    r = team.call("developer", "PUT", team.url(), json={"status": "resolved"})
    assert (r.status_code, r.json()) == (
        400,
        {"error": "ids or query is missing (give one of them)"},
    )
    r = team.call("reporter", "PUT", team.url(), json={"ids": some, "status": "resolved"})
    assert r.status_code == 403


def test_bulk_limits_at_and_past(settings: Settings, team: Team) -> None:
    settings.bulk_max_errors, settings.bulk_batch_errors = 5, 2  # the app reads them per request
    r = team.call("developer", "PUT", team.url(), json={"query": "", "status": "resolved"})
    assert r.json() == {"changed": 5, "batches": 3}, r.text  # 2 + 2 + 1
    team.api.events(team.project, exception_event("Sixth", "v"))
    r = team.call("developer", "PUT", team.url(), json={"query": "", "status": "ignored"})
    assert r.status_code == 400
    assert r.json() == {
        "error": "query matches more than 5 errors: narrow it, or change them in parts"
    }
    ids = [*team.ids, team.ids[-1] + 1]
    r = team.call("developer", "PUT", team.url(), json={"ids": ids, "status": "ignored"})
    assert r.json() == {"error": "ids: at most 5 errors at once"}


def test_sentry_fields_on_api_0(team: Team) -> None:
    issue = f"/api/0/issues/{team.ids[0]}/"
    r = team.call("developer", "PUT", issue, json={"status": "resolvedInNextRelease"})
    assert r.json()["statusDetails"] == {"inNextRelease": True}, r.text
    r = team.call(
        "developer",
        "PUT",
        issue,
        json={"status": "resolved", "statusDetails": {"inRelease": "web@2"}},
    )
    assert r.json()["statusDetails"] == {"inRelease": "web@2"}
    r = team.call(
        "developer",
        "PUT",
        issue,
        json={"status": "ignored", "statusDetails": {"ignoreCount": 10, "ignoreDuration": 60}},
    )
    details = r.json()["statusDetails"]
    assert details["ignoreCount"] == 10 and details["ignoreUntil"].endswith("Z")
    r = team.call("developer", "PUT", issue, json={"assignedTo": "me"})
    assigned = r.json()["assignedTo"]
    assert (assigned["type"], assigned["name"]) == ("user", "Developer")
    r = team.call("developer", "PUT", issue, json={"assignedTo": "stranger"})
    assert r.status_code == 400 and set(r.json()) == {"detail"}
    team.call("developer", "POST", team.url(f"/{team.ids[0]}/comments"), json={"body": "on it"})
    body = team.call("reporter", "GET", issue).json()
    assert body["numComments"] == 1 and body["assignedTo"]["username"] == "developer"
    kinds = [a["type"] for a in body["activity"]]
    assert kinds[0] == "note" and body["activity"][0]["data"] == {"text": "on it"}
    assert "set_ignored" in kinds and "set_resolved_in_release" in kinds
    listed = team.call(
        "reporter",
        "GET",
        "/api/0/projects/acme/web/issues/",
        params={"query": "is:ignored assigned:developer"},
    ).json()
    assert [i["id"] for i in listed] == [str(team.ids[0])]
    assert listed[0]["statusDetails"]["ignoreCount"] == 10
    r = team.call("reporter", "GET", "/api/0/projects/acme/web/issues/", params={"query": "is:"})
    assert r.status_code == 400 and "position 4" in r.json()["detail"]


def test_sentry_bulk_mutation(team: Team) -> None:
    issues = "/api/0/projects/acme/web/issues/"
    r = team.call(
        "developer",
        "PUT",
        issues,
        params=[("id", str(team.ids[0])), ("id", str(team.ids[1]))],
        json={"status": "ignored", "statusDetails": {"ignoreCount": 5}},
    )
    assert r.json() == {"status": "ignored", "statusDetails": {"ignoreCount": 5}, "changed": 2}
    r = team.call(
        "developer", "PUT", issues, params={"query": "is:unresolved"}, json={"status": "resolved"}
    )
    assert r.json()["changed"] == 3
    listed = team.call("reporter", "GET", issues, params={"query": "is:resolved"}).json()
    assert len(listed) == 3
    assert team.call("reporter", "PUT", issues, json={"status": "resolved"}).status_code == 403
    r = team.call("developer", "PUT", issues, params={"id": "x"}, json={"status": "resolved"})
    assert (r.status_code, r.json()) == (400, {"detail": "id is invalid"})
