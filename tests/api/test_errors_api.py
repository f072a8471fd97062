"""Errors, events and release health through /api/v4 (IntegratedSource over the store)."""

from __future__ import annotations

import time

import pytest

from tests.inprocess import Api, exception_event
from tracebox.api.timefmt import iso
from tracebox.models import Project, User
from tracebox.store import digest as store_digest

HOUR = 3600
DAY = 86400


@pytest.fixture
def owner(api: Api) -> User:
    return api.user("owner")


@pytest.fixture
def project(api: Api, owner: User) -> Project:
    return api.project("acme/web", owner)


def errors_url(project: Project, suffix: str = "") -> str:
    return f"/api/v4/projects/{project.id}/error_tracking/errors{suffix}"


def test_keyset_pages_cover_every_error_once(api: Api, owner: User, project: Project) -> None:
    now = time.time()
    for i in range(5):
        api.events(project, exception_event(f"Error{i}", "v", timestamp=now - i * 60))
    token, seen, url = api.token(owner), [], errors_url(project, "?per_page=2")
    while url:
        r = api.call("GET", url, token)
        assert r.status_code == 200, r.text
        seen += [e["type"] for e in r.json()]
        links = dict(
            (part.split('rel="')[1].rstrip('"'), part.split(">")[0].lstrip(" <"))
            for part in r.headers.get("Link", "").split(", ")
            if part
        )
        url = links.get("next", "").replace("http://testserver", "")
    assert seen == [f"Error{i}" for i in range(5)]  # last_seen, newest first
    r = api.call("GET", errors_url(project, "?cursor=garbage"), token)
    assert (r.status_code, r.json()) == (400, {"error": "cursor is invalid"})


def test_filters_sorts_and_hourly_counts(api: Api, owner: User, project: Project) -> None:
    clock = time.time()
    now = max(clock - 30, clock - clock % HOUR)  # in this hour's bucket, even at hh:00:10
    hour = now - now % HOUR
    api.events(project, exception_event("Old", "v", timestamp=now - 5 * HOUR))
    api.events(project, *[exception_event("Hot", "v", timestamp=now) for _ in range(3)])
    token = api.token(owner)
    by_freq = api.call("GET", errors_url(project, "?sort=frequency"), token).json()
    answered = time.time()
    assert [e["type"] for e in by_freq] == ["Hot", "Old"]
    hot = by_freq[0]
    assert hot["events_count"] == 3 and hot["users_count"] == 1
    # The 24 hours end at the server's hour, which is the next one when the hour turned
    # between `clock` and the request: buckets are looked up by their hour, not by index.
    assert len(hot["frequency"]) == 24
    assert hot["frequency"][-1]["time"] in {iso(hour), iso(answered - answered % HOUR)}
    hot_hourly = {b["time"]: b["count"] for b in hot["frequency"]}
    assert hot_hourly[iso(hour)] == 3 and sum(hot_hourly.values()) == 3
    old = by_freq[1]
    old_hourly = {b["time"]: b["count"] for b in old["frequency"]}
    assert old_hourly[iso(hour - 5 * HOUR)] == 1 and sum(old_hourly.values()) == 1
    by_first = api.call("GET", errors_url(project, "?sort=first_seen"), token).json()
    assert [e["type"] for e in by_first] == ["Hot", "Old"]
    found = api.call("GET", errors_url(project, "?search=hot"), token).json()
    assert [e["type"] for e in found] == ["Hot"]
    r = api.call("PUT", errors_url(project, f"/{old['id']}"), token, json={"status": "ignored"})
    assert r.json()["status"] == "ignored"
    assert [e["type"] for e in api.call("GET", errors_url(project), token).json()] == ["Hot"]
    ignored = api.call("GET", errors_url(project, "?status=ignored"), token).json()
    assert [e["type"] for e in ignored] == ["Old"]
    assert len(api.call("GET", errors_url(project, "?status=all"), token).json()) == 2
    r = api.call("PUT", errors_url(project, f"/{old['id']}"), token, json={"status": "x"})
    assert (r.status_code, r.json()) == (400, {"error": "status is invalid"})


def test_details_events_and_latest(api: Api, owner: User, project: Project) -> None:
    now = time.time()
    # The two recent events fall in today's UTC day whatever the hour: a run in the first
    # minutes after midnight once put them in two different days.
    today = now - now % DAY
    latest_at, earlier_at = today + (now - today) / 2, today + (now - today) / 4
    api.events(
        project,
        exception_event(event_id="1" * 32, timestamp=now - 2 * DAY, release="web@1.0.0"),
        exception_event(
            event_id="2" * 32, timestamp=latest_at, release="web@2.0.0", tags={"browser": "Chrome"}
        ),
        exception_event(event_id="3" * 32, timestamp=earlier_at, release="web@2.0.0"),
    )
    token = api.token(owner)
    [error] = api.call("GET", errors_url(project), token).json()
    details = api.call("GET", errors_url(project, f"/{error['id']}"), token).json()
    assert (details["first_release"], details["last_release"]) == ("web@1.0.0", "web@2.0.0")
    # Looked up by day, so a midnight between the events and this request moves nothing.
    daily = {d["time"]: d["count"] for d in details["frequency_30d"]}
    assert len(daily) == 30 and sum(daily.values()) == 3
    assert daily[iso(today)] == 2 and daily[iso(today - 2 * DAY)] == 1
    browser = next(t for t in details["tags"] if t["key"] == "browser")
    assert browser["total"] == 3
    assert browser["top_values"] == [
        {"value": "Firefox", "count": 2},
        {"value": "Chrome", "count": 1},
    ]
    latest = details["latest_event"]
    assert latest["event_id"] == "2" * 32
    frames = latest["stack_trace"]
    assert [f["function"] for f in frames] == ["dispatch", "main", "handle"]
    assert frames[1]["context"] == [[9, "def main():"], [10, "    handle()"], [11, ""]]
    assert (
        api.call("GET", errors_url(project, f"/{error['id']}/events/latest"), token).json()
        == latest
    )
    page = api.call("GET", errors_url(project, f"/{error['id']}/events?per_page=2"), token)
    assert [e["event_id"] for e in page.json()] == ["2" * 32, "3" * 32]
    assert 'rel="next"' in page.headers["Link"]
    one = api.call("GET", errors_url(project, f"/{error['id']}/events/{'1' * 32}"), token)
    assert one.json()["release"] == "web@1.0.0"
    missing = api.call("GET", errors_url(project, f"/{error['id']}/events/{'f' * 32}"), token)
    assert (missing.status_code, missing.json()) == (404, {"message": "404 Event Not Found"})
    gone = api.call("GET", errors_url(project, "/999999"), token)
    assert (gone.status_code, gone.json()) == (404, {"message": "404 Error Not Found"})


def test_release_health(api: Api, owner: User, project: Project) -> None:
    now = time.time()
    sessions = [
        {
            "sid": f"s{i}",
            "did": f"u{i % 3}",
            "release": "web@1",
            "environment": "production",
            "started": now - 100,
            "timestamp": now,
            "seq": 1,
            "status": status,
            "errors": errors,
            "duration": 1.0,
        }
        for i, (status, errors) in enumerate(
            [("exited", 0), ("exited", 0), ("crashed", 1), ("exited", 2), ("abnormal", 0)]
        )
    ]
    aggregates = [
        {
            "started": now - 50,
            "did": None,
            "exited": 4,
            "errored": 1,
            "crashed": 0,
            "abnormal": 0,
            "release": "web@2",
            "environment": "production",
        }
    ]
    with api.db.write() as conn:
        for session in sessions:  # one by one: write_sessions fails on executemany (reported)
            store_digest.write_sessions(conn, project.id, [session])
        store_digest.write_session_aggregates(conn, project.id, aggregates)
    token = api.token(owner)
    r = api.call("GET", f"/api/v4/projects/{project.id}/error_tracking/releases", token)
    assert r.status_code == 200 and r.headers["X-Total"] == "2"
    newest, older = r.json()
    assert newest == {
        "release": "web@2",
        "environment": "production",
        "sessions": 5,
        "crashed": 0,
        "errored": 1,
        "users": 0,
        "crashed_users": 0,
        "crash_free_sessions": 100.0,
        "crash_free_users": None,
    }
    assert (older["sessions"], older["crashed"], older["errored"]) == (5, 1, 2)
    assert older["crash_free_sessions"] == 80.0
    assert (older["users"], older["crashed_users"]) == (3, 1)
    assert older["crash_free_users"] == pytest.approx(66.6667)


def test_each_event_has_its_own_title_message_and_culprit(
    api: Api, owner: User, project: Project
) -> None:
    """Two events of one error (same stack, different messages): the error keeps its
    latest title in the list; each event answers its own, in /api/v4 and /api/0."""
    now = time.time()
    old = exception_event("Warning", "file_get_contents(): failed", event_id="1" * 32)
    new = exception_event("Warning", "Undefined variable $total", event_id="2" * 32)
    api.events(project, {**old, "timestamp": now - 60, "message": "reading the file"})
    api.events(project, {**new, "timestamp": now - 30})
    token = api.token(owner)
    [error] = api.call("GET", errors_url(project), token).json()
    assert error["title"] == "Warning: Undefined variable $total" and error["events_count"] == 2
    events = api.call("GET", errors_url(project, f"/{error['id']}/events"), token).json()
    assert [e["title"] for e in events] == [
        "Warning: Undefined variable $total",
        "Warning: file_get_contents(): failed",
    ]
    first = api.call("GET", errors_url(project, f"/{error['id']}/events/{'1' * 32}"), token).json()
    assert first["title"] == "Warning: file_get_contents(): failed"
    assert first["message"] == "reading the file"
    assert first["culprit"] == "app/handlers.py in handle"
    auth = {"Authorization": f"Bearer {token}"}
    sentry = api.client.get(f"/api/0/issues/{error['id']}/events/{'1' * 32}/", headers=auth)
    assert sentry.status_code == 200, sentry.text
    assert sentry.json()["title"] == "Warning: file_get_contents(): failed"
    assert sentry.json()["metadata"] == {"type": "Warning", "value": "file_get_contents(): failed"}
    latest = api.client.get(f"/api/0/issues/{error['id']}/events/latest/", headers=auth).json()
    assert latest["title"] == "Warning: Undefined variable $total"
    missing = api.client.get(f"/api/0/issues/{error['id']}/events/{'3' * 32}/", headers=auth)
    assert missing.status_code == 404
