"""The /api/0/ subset against the shapes in the reference notes (sentry-protocol.md section
10, gitlab-error-tracking.md section 4): the fields GitLab's Sentry client reads, read the
way it reads them (KeyError on a missing one, ``id`` numeric, ``count`` a string, the
Link header parsed with GitLab's own regular expression)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.inprocess import Api, exception_event

ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
# GitLab lib/error_tracking/sentry_client/pagination_parser.rb
GITLAB_LINK = re.compile(
    r'rel="(?P<direction>\w+)";\sresults="(?P<results>\w+)";\scursor="(?P<cursor>.+)"'
)


@pytest.fixture
def sentry(api: Api) -> tuple[Api, str, int]:
    owner = api.user("owner")
    project = api.project("acme/web", owner)
    api.events(project, exception_event(event_id="c" * 32, message="hello"))
    api.events(project, exception_event("KeyError", "k"), exception_event("KeyError", "k"))
    api.events(project, exception_event("TypeError", "t"))
    return api, api.token(owner), project.id


def gitlab_pagination(link: str) -> dict[str, dict[str, str]]:
    """GitLab's PaginationParser: split on ',', keep the links with results="true"."""
    found = {}
    for part in link.split(","):
        m = GITLAB_LINK.search(part)
        assert m, f"Link part not in Sentry's form: {part!r}"
        if m["results"] == "true":
            found[m["direction"]] = {"cursor": m["cursor"]}
    return found


def gitlab_issue(issue: dict[str, Any]) -> dict[str, Any]:
    """What GitLab's SentryClient::Issue#map_to_error reads from a list item."""
    assert issue["id"].isdigit()
    return {
        "id": issue["id"],
        "first_seen": issue["firstSeen"],
        "last_seen": issue["lastSeen"],
        "title": issue["title"],
        "type": issue["type"],
        "user_count": issue["userCount"],
        "count": issue["count"],
        "message": issue["metadata"].get("value"),
        "culprit": issue["culprit"],
        "short_id": issue["shortId"],
        "status": issue["status"],
        "frequency": issue["stats"]["24h"],
        "project_id": issue["project"]["id"],
        "project_name": issue["project"]["name"],
        "project_slug": issue["project"]["slug"],
    }


def test_projects_list(sentry: tuple[Api, str, int]) -> None:
    api, token, project_id = sentry
    r = api.client.get("/api/0/projects/", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200
    [project] = r.json()
    assert project["id"] == str(project_id)
    assert (project["name"], project["slug"], project["status"]) == ("web", "web", "active")
    assert {k: project["organization"][k] for k in ("name", "slug")} == {
        "name": "acme",
        "slug": "acme",
    }
    assert "id" in project["organization"]
    for key in (
        "isPublic",
        "isMember",
        "hasAccess",
        "platform",
        "dateCreated",
        "firstEvent",
        "features",
        "color",
        "avatar",
    ):
        assert key in project
    assert set(gitlab_pagination(r.headers["Link"])) == set()


def test_issue_list_fields_and_pagination(sentry: tuple[Api, str, int]) -> None:
    api, token, project_id = sentry
    auth = {"Authorization": f"Bearer {token}"}
    r = api.client.get("/api/0/projects/acme/web/issues/?query=is:unresolved&limit=2", headers=auth)
    assert r.status_code == 200, r.text
    first = [gitlab_issue(i) for i in r.json()]
    assert len(first) == 2
    for issue in r.json():
        assert isinstance(issue["count"], str) and isinstance(issue["userCount"], int)
        assert ISO_Z.match(issue["firstSeen"]) and ISO_Z.match(issue["lastSeen"])
        assert issue["status"] == "unresolved" and issue["type"] == "error"
        assert len(issue["stats"]["24h"]) == 24
        assert all(isinstance(t, int) and isinstance(n, int) for t, n in issue["stats"]["24h"])
        assert issue["project"]["id"] == str(project_id)
        assert re.fullmatch(r"WEB-\d+", issue["shortId"])
    pages = gitlab_pagination(r.headers["Link"])
    assert set(pages) == {"next"}  # both links present, only next has results
    assert r.headers["Link"].count("rel=") == 2
    r2 = api.client.get(
        f"/api/0/projects/acme/web/issues/?query=is:unresolved&limit=2"
        f"&cursor={pages['next']['cursor']}",
        headers=auth,
    )
    second = [gitlab_issue(i) for i in r2.json()]
    assert len(second) == 1
    assert {i["id"] for i in first}.isdisjoint(i["id"] for i in second)
    assert set(gitlab_pagination(r2.headers["Link"])) == {"previous"}
    back = gitlab_pagination(r2.headers["Link"])["previous"]["cursor"]
    r3 = api.client.get(
        f"/api/0/projects/acme/web/issues/?query=is:unresolved&limit=2&cursor={back}", headers=auth
    )
    assert [i["id"] for i in r3.json()] == [i["id"] for i in first]


def test_link_urls_encode_the_query(api: Api) -> None:
    """A search with ``&``, ``"``, spaces and non-ASCII survives the round trip through
    the Link header: its URLs are plain ASCII and the next one gives the next page."""
    owner = api.user("owner")
    project = api.project("acme/shop", owner)
    value = 'a & b "c" café'
    api.events(
        project,
        exception_event("ValueError", value),
        exception_event("KeyError", value),
        exception_event("TypeError", "something else"),
    )
    auth = {"Authorization": f"Bearer {api.token(owner)}"}
    query = 'is:unresolved "a & b \\"c\\" café"'
    r = api.client.get(
        "/api/0/projects/acme/shop/issues/", params={"query": query, "limit": 1}, headers=auth
    )
    assert r.status_code == 200, r.text
    [first] = r.json()
    urls = {rel: url for url, rel in re.findall(r'<([^>]*)>; rel="(\w+)"', r.headers["Link"])}
    assert set(urls) == {"previous", "next"}
    for url in urls.values():
        assert url.isascii() and not set(url) & set(' "<>,'), url
        params = parse_qs(urlsplit(url).query)
        assert params["query"] == [query] and params["limit"] == ["1"]
    next_url = urlsplit(urls["next"])
    r2 = api.client.get(f"{next_url.path}?{next_url.query}", headers=auth)
    assert r2.status_code == 200, r2.text
    [second] = r2.json()
    titles = {first["title"], second["title"]}
    assert titles == {f"ValueError: {value}", f"KeyError: {value}"}


def test_issue_list_query_and_sort(sentry: tuple[Api, str, int]) -> None:
    api, token, _ = sentry
    auth = {"Authorization": f"Bearer {token}"}
    by_freq = api.client.get("/api/0/projects/acme/web/issues/?sort=freq", headers=auth).json()
    assert by_freq[0]["count"] == "2" and by_freq[0]["metadata"]["type"] == "KeyError"
    found = api.client.get(
        "/api/0/projects/acme/web/issues/?query=is:unresolved TypeError", headers=auth
    ).json()
    assert [i["metadata"]["type"] for i in found] == ["TypeError"]
    assert (
        api.client.get("/api/0/projects/acme/web/issues/?query=is:resolved", headers=auth).json()
        == []
    )
    assert (
        api.client.get("/api/0/projects/acme/web/issues/?sort=bogus", headers=auth).status_code
        == 400
    )


def test_issue_details_latest_event_and_update(sentry: tuple[Api, str, int]) -> None:
    api, token, project_id = sentry
    auth = {"Authorization": f"Bearer {token}"}
    issues = api.client.get("/api/0/projects/acme/web/issues/", headers=auth).json()
    value_error = next(i for i in issues if i["metadata"]["type"] == "ValueError")
    issue_id = value_error["id"]

    details = api.client.get(f"/api/0/issues/{issue_id}/", headers=auth).json()
    gitlab_issue(details)
    for key in (
        "activity",
        "participants",
        "seenBy",
        "tags",
        "userReportCount",
        "pluginIssues",
        "pluginActions",
        "pluginContexts",
        "annotations",
        "level",
        "logger",
    ):
        assert key in details
    for key in ("lastCommit", "shortVersion", "version"):
        assert key in details["firstRelease"] and key in details["lastRelease"]
    assert details["firstRelease"]["version"] == "web@1.0.0"

    event = api.client.get(f"/api/0/issues/{issue_id}/events/latest/", headers=auth).json()
    assert re.fullmatch(r"[0-9a-f]{32}", event["eventID"]) and event["id"] == event["eventID"]
    assert event["groupID"] == issue_id and event["projectID"] == str(project_id)
    assert ISO_Z.match(event["dateReceived"])
    exception = next(e for e in event["entries"] if e["type"] == "exception")
    with_stack = next(v for v in exception["data"]["values"] if v.get("stacktrace"))
    frames = with_stack["stacktrace"]["frames"]
    for frame in frames:  # GitLab's stack trace builder reads these
        for key in ("function", "colNo", "lineNo", "filename", "context", "absPath", "inApp"):
            assert key in frame
    assert frames[1]["context"][0] == [9, "def main():"]
    assert frames[1]["context"][1] == [10, "    handle()"]

    put = api.client.put(f"/api/0/issues/{issue_id}/", json={"status": "resolved"}, headers=auth)
    assert put.status_code == 200 and put.json()["status"] == "resolved"
    again = api.client.get(f"/api/0/issues/{issue_id}/", headers=auth).json()
    assert again["status"] == "resolved"
    nxt = api.client.put(
        f"/api/0/issues/{issue_id}/", json={"status": "resolvedInNextRelease"}, headers=auth
    )
    assert nxt.json()["status"] == "resolved"
    bad = api.client.put(f"/api/0/issues/{issue_id}/", json={"status": "nope"}, headers=auth)
    assert bad.status_code == 400 and set(bad.json()) == {"detail"}


def test_errors_use_sentry_shape(sentry: tuple[Api, str, int]) -> None:
    api, _, _ = sentry
    r = api.client.get("/api/0/projects/")
    assert r.status_code == 401 and set(r.json()) == {"detail"}
    r = api.client.get("/api/0/issues/999999/", headers={"Authorization": "Bearer tbpat-nope"})
    assert r.status_code == 401
