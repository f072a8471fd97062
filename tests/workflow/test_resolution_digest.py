"""Sentry's resolve and ignore conditions, enforced by the digest's batch write: each
condition is set through /api/v4, then events go through the digest's own preparation
and batch write (``Domain.events``), in the transaction that stores them."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from typing import Any

import pytest

from tests.inprocess import Api, exception_event
from tracebox.models import Project


@dataclass
class One:
    """One error of a project, changed and read through the API."""

    api: Api
    project: Project
    token: str
    error_id: int

    @property
    def url(self) -> str:
        return f"/api/v4/projects/{self.project.id}/error_tracking/errors/{self.error_id}"

    def put(self, **body: Any) -> dict[str, Any]:
        r = self.api.call("PUT", self.url, self.token, json=body)
        assert r.status_code == 200, r.text
        return dict(r.json())

    def status(self) -> str:
        return str(self.api.call("GET", self.url, self.token).json()["status"])

    def activity(self) -> list[dict[str, Any]]:
        r = self.api.call("GET", self.url + "/activity", self.token)
        assert r.status_code == 200, r.text
        return list(r.json())

    def event(self, release: str | None = "web@1.0.0", user: str = "u1", **extra: Any) -> None:
        """One more event of this error, a second after now (so after any resolution)."""
        self.api.events(
            self.project,
            exception_event(release=release, user={"id": user}, timestamp=time.time() + 1, **extra),
        )


@pytest.fixture
def one(api: Api) -> One:
    owner = api.user("owner")
    project = api.project("acme/web", owner)
    api.events(project, exception_event(release="web@1.0.0", timestamp=time.time() - 60))
    token = api.token(owner)
    found = api.call("GET", f"/api/v4/projects/{project.id}/error_tracking/errors", token).json()
    return One(api, project, token, found[0]["id"])


def test_resolved_now_reopens_on_the_next_event_with_an_activity_entry(one: One) -> None:
    body = one.put(status="resolved")
    assert body["status_details"]["resolution"] == "now"
    one.api.events(one.project, exception_event(timestamp=time.time() - 30))  # happened before
    assert one.status() == "resolved"
    one.event()
    assert one.status() == "unresolved"
    last = one.activity()[-1]
    assert (last["type"], last["user"], last["data"]["release"]) == (
        "set_regression",
        None,
        "web@1.0.0",
    )


def test_resolved_in_release_ignores_older_releases(one: One) -> None:
    one.event(release="web@1.5.0")  # known releases: 1.0.0, then 1.5.0
    body = one.put(status="resolved", status_details={"in_release": "web@2.0.0"})
    assert body["status_details"]["in_release"] == "web@2.0.0"
    one.event(release="web@1.5.0")
    one.event(release=None)  # cannot be placed: not a regression
    assert one.status() == "resolved"
    one.event(release="web@2.0.0")  # the fixed release itself still fails: regression
    assert one.status() == "unresolved"
    one.put(status="resolved", status_details={"in_release": "web@2.0.0"})
    one.event(release="web@10.0.0")  # semver: 10 > 2
    assert one.status() == "unresolved"


def test_resolved_in_next_release_waits_for_a_newer_release(one: One) -> None:
    body = one.put(status="resolved", status_details={"in_next_release": True})
    details = body["status_details"]
    assert (details["in_next_release"], details["after_release"]) == (True, "web@1.0.0")
    one.event(release="web@1.0.0")
    assert one.status() == "resolved"
    one.event(release="web@1.0.1")
    assert one.status() == "unresolved"
    kinds = [a["type"] for a in one.activity()]
    assert kinds == ["set_resolved_in_next_release", "set_regression"]


def test_non_semver_releases_compare_by_first_seen(one: One) -> None:
    one.event(release="build-b")
    one.event(release="build-a")  # seen after build-b: newer, whatever its name
    one.put(status="resolved", status_details={"in_release": "build-a"})
    one.event(release="build-b")
    assert one.status() == "resolved"
    one.event(release="build-c")  # never seen before: the newest
    assert one.status() == "unresolved"


def test_ignored_forever_stays_ignored(one: One) -> None:
    one.put(status="ignored")
    for _ in range(3):
        one.event()
    assert one.status() == "ignored"


def test_ignored_until_n_more_events(one: One) -> None:
    body = one.put(status="ignored", status_details={"ignore_count": 3})
    assert body["status_details"]["ignore_count"] == 3
    one.event()
    one.event()
    assert one.status() == "ignored"
    one.event()
    assert one.status() == "unresolved"
    last = one.activity()[-1]
    assert (last["type"], last["data"]) == ("set_unresolved", {"reason": "ignore_count"})


def test_ignored_until_n_more_users(one: One) -> None:
    one.put(status="ignored", status_details={"ignore_user_count": 2})
    one.event(user="u1")  # u1 was already counted
    one.event(user="u2")
    assert one.status() == "ignored"
    one.event(user="u3")
    assert one.status() == "unresolved"
    assert one.activity()[-1]["data"] == {"reason": "ignore_user_count"}


def test_ignored_for_a_time_ends_with_the_next_batch_even_without_its_events(
    api: Api, one: One
) -> None:
    soon = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)
    body = one.put(status="ignored", status_details={"ignore_until": soon.isoformat()})
    assert body["status_details"]["ignore_until"] is not None
    other = exception_event("OtherError", "elsewhere", timestamp=time.time())
    api.events(one.project, other)
    assert one.status() == "ignored"
    time.sleep(1.1)
    api.events(one.project, {**other, "timestamp": time.time()})  # another error's event
    assert one.status() == "unresolved"
    assert one.activity()[-1]["data"] == {"reason": "ignore_until"}


def test_ignored_for_a_duration(one: One) -> None:
    before = time.time()
    body = one.put(status="ignored", status_details={"ignore_duration": 30})
    until = dt.datetime.fromisoformat(body["status_details"]["ignore_until"]).timestamp()
    assert before + 30 * 60 - 1 <= until <= time.time() + 30 * 60 + 1
    one.event()
    assert one.status() == "ignored"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"status": "ignored", "status_details": {"in_release": "x"}}, "a release needs status"),
        ({"status": "resolved", "status_details": {"ignore_count": 5}}, "ignore conditions need"),
        (
            {"status": "resolved", "status_details": {"in_release": "a", "in_next_release": True}},
            "status_details: in_release or in_next_release, not both",
        ),
        ({"status": "ignored", "status_details": {"ignore_count": 0}}, None),
        ({"status_details": {"ignore_count": 5}}, "status is missing"),
        ({}, "status, assignee_id, reviewed or external_issue_url is missing"),
    ],
)
def test_bad_conditions_are_400(one: One, body: dict[str, Any], error: str | None) -> None:
    r = one.api.call("PUT", one.url, one.token, json=body)
    assert r.status_code == 400, r.text
    if error is not None:
        assert error in r.json()["error"]
    assert one.status() == "unresolved"  # nothing changed
