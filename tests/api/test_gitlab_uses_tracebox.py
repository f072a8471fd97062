"""Self-managed GitLab using Tracebox as its Sentry backend: GitLab's Sentry client
requests replayed as it makes them (lib/error_tracking/sentry_client/*.rb: paths, query,
headers, and the fields it reads), for a project in a nested namespace and one in a
top-level group.

GitLab's settings take the host root as the API URL and the project picked from
``GET /api/0/projects/``; it stores ``{host}/api/0/projects/{organization.slug}/{slug}/``
and builds every other URL from it.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.inprocess import Api, exception_event
from tracebox.models import Project

HOST = "http://testserver"
LINK = re.compile(r'rel="(\w+)";\sresults="(\w+)";\scursor="(.+)"')  # GitLab's parser


class GitLab:
    """What GitLab's SentryClient sends: Bearer token, JSON, no redirects followed."""

    def __init__(self, api: Api, token: str) -> None:
        self.api = api
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def get(self, url: str, **params: str) -> httpx.Response:
        return self.api.client.get(
            re.sub(r"(?<!:)/{2,}", "/", url),  # GitLab squeezes doubled slashes
            params=params,
            headers=self.headers,
            follow_redirects=False,
        )

    def send(self, method: str, url: str, body: dict[str, Any]) -> httpx.Response:
        return self.api.client.request(method, url, json=body, headers=self.headers)


def pages(link_header: str) -> dict[str, str]:
    """GitLab's PaginationParser: only the directions with ``results="true"``."""
    found = {}
    for part in link_header.split(","):
        m = LINK.search(part)
        if m and m.group(2) == "true":
            found[m.group(1)] = m.group(3)
    return found


def walk(api: Api, path: str, *, per_page: int = 2) -> None:
    """The whole of GitLab's use of one project, checked at each step."""
    owner = api.user()
    project = api.project(path, owner)
    with api.db.write() as conn:
        from tracebox.tracking import settings as tracking_settings

        tracking_settings.set_gitlab_project_url(
            conn, project.id, f"https://gitlab.example.com/{path}"
        )
    api.events(project, *(exception_event(f"Error{n}", f"failure {n}") for n in range(5)))
    gitlab = GitLab(api, api.token(owner))

    # Settings > Monitor: "Connect" lists projects; the user picks ours.
    listed = gitlab.get(f"{HOST}/api/0/projects/")
    assert listed.status_code == 200
    chosen = next(p for p in listed.json() if p["id"] == str(project.id))
    for key in ("id", "name", "slug", "status"):
        assert key in chosen
    org = chosen["organization"]
    assert {"name", "id", "slug"} <= set(org)
    namespace = path.rpartition("/")[0]
    assert org["slug"] == quote(namespace, safe="") and org["name"] == namespace
    assert "/" not in org["slug"]  # GitLab rejects a slug that splits its URL
    api_url = f"{HOST}/api/0/projects/{org['slug']}/{chosen['slug']}/"
    sentry_external_url = api_url.replace("api/0/projects/", "")

    # The error list, paged as GitLab pages it (sort map: frequency -> freq).
    seen: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(5):
        query = {"query": "is:unresolved", "limit": str(per_page), "sort": "freq"}
        r = gitlab.get(api_url + "issues/", **query, **({"cursor": cursor} if cursor else {}))
        assert r.status_code == 200, r.text
        for issue in r.json():
            assert issue["id"].isdigit()
            for key in ("firstSeen", "lastSeen", "title", "type", "userCount", "count"):
                assert key in issue
            for key in ("culprit", "shortId", "status"):
                assert key in issue
            assert issue["metadata"]["value"].startswith("failure")
            assert all(len(b) == 2 for b in issue["stats"]["24h"])
            assert issue["project"]["id"] == str(project.id)
        seen += r.json()
        cursor = pages(r.headers["link"]).get("next")
        if cursor is None:
            break
    assert len({i["id"] for i in seen}) == 5

    # Search goes in the query after the status.
    found = gitlab.get(api_url + "issues/", query="is:unresolved failure 3", limit="20")
    assert [i["metadata"]["value"] for i in found.json()] == ["failure 3"]

    # Details, with GitLab's check that the issue belongs to the configured project.
    issue_id = found.json()[0]["id"]
    details = gitlab.get(f"{HOST}/api/0/issues/{issue_id}/").json()
    assert details["project"]["id"] == chosen["id"]
    for key in ("level", "logger", "annotations", "pluginIssues", "firstRelease", "lastRelease"):
        assert key in details
    assert details["firstRelease"]["version"] == "web@1.0.0"
    permalink = httpx.URL(details["permalink"]).path
    assert permalink == f"/{path}/-/error_tracking/{issue_id}"

    latest = gitlab.get(f"{HOST}/api/0/issues/{issue_id}/events/latest/").json()
    assert latest["groupID"] == issue_id and latest["projectID"] == str(project.id)
    assert latest["dateReceived"]
    exception = next(e for e in latest["entries"] if e["type"] == "exception")
    frames = next(v for v in exception["data"]["values"] if v.get("stacktrace"))["stacktrace"]
    assert frames["frames"][-1]["function"] == "handle"

    # "View in Sentry": {sentry_external_url}/issues/{id} opens the error's page.
    view = gitlab.get(f"{sentry_external_url}issues/{issue_id}")
    assert view.status_code in (302, 303)
    assert view.headers["location"] == f"/{path}/-/error_tracking/{issue_id}"

    # "Create issue": GitLab looks for a repository, finds none, links through the plugin.
    repos = gitlab.get(f"{HOST}/api/0/organizations/{org['slug']}/repos/")
    assert repos.status_code == 200 and repos.json() == []
    link = gitlab.send(
        "POST", f"{HOST}/api/0/issues/{issue_id}/plugins/gitlab/link/", {"issue_id": 7}
    )
    assert link.status_code == 200, link.text
    issue_url = f"https://gitlab.example.com/{path}/-/issues/7"
    details = gitlab.get(f"{HOST}/api/0/issues/{issue_id}/").json()
    plugin = next(p for p in details["pluginIssues"] if p["id"] == "gitlab")
    assert plugin["issue"]["url"] == issue_url  # GitLab shows it on the error
    v4 = api.call(
        "GET",
        f"/api/v4/projects/{project.id}/error_tracking/errors/{issue_id}",
        gitlab.headers["Authorization"].split()[1],
    ).json()
    assert v4["external_issue_url"] == issue_url

    # Resolve and ignore.
    for status in ("resolved", "ignored", "unresolved"):
        r = gitlab.send("PUT", f"{HOST}/api/0/issues/{issue_id}/", {"status": status})
        assert r.status_code == 200 and r.json()["status"] == status


@pytest.mark.parametrize("path", ["grp/sub/web", "acme/web"])
def test_gitlab_walks_a_project(api: Api, path: str) -> None:
    walk(api, path)


def test_links_need_the_gitlab_project_url_and_the_right_role(api: Api) -> None:
    owner, reporter = api.user(), api.user()
    project: Project = api.project("acme/web", owner)
    from tracebox.models import AccessLevel

    api.member(project, reporter, AccessLevel.REPORTER)
    api.events(project, exception_event())
    token = api.token(owner)
    [error] = api.call("GET", f"/api/v4/projects/{project.id}/error_tracking/errors", token).json()
    link = f"/api/0/issues/{error['id']}/plugins/gitlab/link/"
    auth = {"Authorization": f"Bearer {token}"}
    unset = api.client.post(link, json={"issue_id": 3}, headers=auth)
    assert unset.status_code == 400 and "gitlab_project_url" in unset.json()["detail"]
    settings = f"/api/v4/projects/{project.id}/error_tracking/settings"
    bad = api.call("PATCH", settings, token, json={"active": True, "gitlab_project_url": "ftp://x"})
    assert bad.status_code == 400 and bad.json() == {"error": "gitlab_project_url is invalid"}
    good = {"active": True, "gitlab_project_url": "https://gitlab.example.com/acme/web/"}
    saved = api.call("PATCH", settings, token, json=good).json()
    assert saved["gitlab_project_url"] == "https://gitlab.example.com/acme/web"
    for body in ({"issue_id": "x"}, {"issue_id": 0}, {}):
        assert api.client.post(link, json=body, headers=auth).status_code == 400
    weak = {"Authorization": f"Bearer {api.token(reporter)}"}
    assert api.client.post(link, json={"issue_id": 3}, headers=weak).status_code == 403
    assert api.client.post(link, json={"issue_id": 3}, headers=auth).status_code == 200
    stranger = {"Authorization": f"Bearer {api.token(api.user())}"}
    assert api.client.get("/api/0/organizations/acme/repos/", headers=stranger).status_code == 404
