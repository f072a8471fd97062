"""/api/v4: usage, retention, deletions and the audit log."""

from __future__ import annotations

import time

from tests.inprocess import Api, exception_event
from tests.lifecycle.helpers import DAY
from tracebox.config import Settings
from tracebox.lifecycle.cleanup import CleanupLoop
from tracebox.models import Project
from tracebox.store import Database, client_keys, client_reports, projects


def setup(api: Api) -> tuple[int, str, str]:
    owner = api.user("owner")
    project = api.project("acme/web", owner)
    return project.id, api.token(owner), api.token(api.user("root", admin=True))


def test_usage_counts_what_is_stored_and_what_happened(api: Api) -> None:
    p, token, _ = setup(api)
    api.events(api_project(api, p), *[exception_event(event_id=f"{i:032x}") for i in range(3)])
    hour = int(time.time() // 3600)
    with api.db.write() as conn:  # what the SDKs reported they discarded (client reports)
        client_reports.add(
            conn, {(p, hour, "error", "before_send"): 4, (p, hour, "session", "sample_rate"): 2}
        )

    usage = api.call("GET", f"/api/v4/projects/{p}/usage", token).json()

    assert usage["stored"][0] == {
        "kind": "events",
        "items": 3,
        "bytes": usage["stored"][0]["bytes"],
    }
    assert usage["stored"][0]["bytes"] > 0
    assert [s["kind"] for s in usage["stored"]] == ["events", "attachments", "logs", "artifacts"]
    assert usage["last_30_days"]["accepted"] == 3 == usage["last_30_days"]["received"]
    assert usage["last_30_days"]["client_discarded"] == {
        "before_send": 4,
        "sample_rate (session)": 2,
    }
    assert sum(d["accepted"] for d in usage["daily"]) == 3 and len(usage["daily"]) == 30
    assert usage["retention"] == {
        "max_age_days": 90,
        "max_events_per_error": 1000,
        "max_age_days_is_default": True,
        "max_events_per_error_is_default": True,
    }


def api_project(api: Api, project_id: int) -> Project:
    with api.db.read() as conn:
        found = projects.get(conn, project_id)
    assert found is not None
    return found


def test_retention_is_set_per_project_validated_and_audited(api: Api) -> None:
    p, token, _ = setup(api)
    url = f"/api/v4/projects/{p}/retention"

    r = api.call("PUT", url, token, json={"max_age_days": 30})
    assert r.status_code == 200
    assert r.json()["max_age_days"] == 30 and r.json()["max_events_per_error"] == 1000
    assert r.json()["max_events_per_error_is_default"] is True
    for bad in ({"max_age_days": 0}, {"max_age_days": 3651}, {"max_events_per_error": 0}):
        assert api.call("PUT", url, token, json=bad).status_code == 400
    assert api.call("PUT", url, token, json={"max_age_days": 3650}).status_code == 200

    trail = api.call("GET", f"/api/v4/projects/{p}/audit_events", token).json()
    assert [e["action"] for e in trail] == ["retention.update", "retention.update"]
    assert trail[0]["author_name"] == "owner" and trail[0]["entity_path"] == "acme/web"
    assert trail[1]["details"] == {"max_age_days": 30, "max_events_per_error": None}


def test_an_error_whose_events_expired_keeps_its_counts_and_says_so(
    api: Api, settings: Settings, db: Database
) -> None:
    p, token, _ = setup(api)
    old = time.time() - 100 * DAY
    api.events(api_project(api, p), exception_event(event_id="a" * 32), received=old)
    errors = f"/api/v4/projects/{p}/error_tracking/errors"
    error_id = api.call("GET", errors, token).json()[0]["id"]
    before = api.call("GET", f"{errors}/{error_id}", token).json()
    assert before["events_expired"] is False

    CleanupLoop(db, settings).run_once()

    after = api.call("GET", f"{errors}/{error_id}", token).json()
    assert after["events_expired"] is True and after["latest_event"] is None
    for key in ("events_count", "users_count", "first_seen", "last_seen"):
        assert after[key] == before[key]
    # Day by day: a UTC midnight between the two requests moves the 30 days on by one,
    # and the new day counts what it counted before (nothing).
    daily_before = {d["time"]: d["count"] for d in before["frequency_30d"]}
    daily_after = {d["time"]: d["count"] for d in after["frequency_30d"]}
    assert len(daily_after) == 30
    assert daily_after == {day: daily_before.get(day, 0) for day in daily_after}
    assert api.call("GET", f"{errors}/{error_id}/events", token).json() == []


def test_deleting_an_error_and_a_users_events(api: Api) -> None:
    p, token, _ = setup(api)
    project = api_project(api, p)
    api.events(project, exception_event(event_id="a" * 32, user={"email": "ann@example.com"}))
    api.events(project, exception_event("KeyError", "k", event_id="b" * 32, user={"id": "7"}))
    errors = f"/api/v4/projects/{p}/error_tracking/errors"
    listed = {e["title"].split(":")[0]: e["id"] for e in api.call("GET", errors, token).json()}

    r = api.call("DELETE", f"{errors}/{listed['ValueError']}", token)
    assert r.status_code == 202 and r.json()["state"] == "done" and r.json()["events_deleted"] == 1
    assert api.call("GET", f"{errors}/{listed['ValueError']}", token).status_code == 404
    assert api.call("DELETE", f"{errors}/{listed['ValueError']}", token).status_code == 404

    deletions = f"/api/v4/projects/{p}/error_tracking/user_deletions"
    for bad in ({}, {"id": "7", "email": "x@example.com"}, {"email": ""}, {"id": "x" * 256}):
        assert api.call("POST", deletions, token, json=bad).status_code == 400
    r = api.call("POST", deletions, token, json={"id": "7"})
    assert r.status_code == 202 and r.json()["events_deleted"] == 1
    assert r.json()["target"].startswith("id sha256:")
    job = api.call("GET", f"/api/v4/projects/{p}/error_tracking/deletions/{r.json()['id']}", token)
    assert job.json() == r.json()
    listed_jobs = api.call("GET", f"/api/v4/projects/{p}/error_tracking/deletions", token).json()
    assert [j["kind"] for j in listed_jobs] == ["user", "error"]

    trail = api.call("GET", f"/api/v4/projects/{p}/audit_events", token).json()
    assert [e["action"] for e in trail] == [
        "deletion.finished",
        "user_data.delete",
        "deletion.finished",
        "error.delete",
    ]


def test_erasing_a_projects_data_keeps_the_project(api: Api) -> None:
    p, token, _ = setup(api)
    api.events(api_project(api, p), exception_event(event_id="a" * 32))

    r = api.call("DELETE", f"/api/v4/projects/{p}/error_tracking/data", token)

    assert r.status_code == 202 and r.json()["state"] == "done"
    assert api.call("GET", f"/api/v4/projects/{p}/error_tracking/errors", token).json() == []
    assert api.call("GET", f"/api/v4/projects/{p}", token).status_code == 200


def test_the_instance_storage_and_audit_log_are_for_admins(api: Api) -> None:
    p, token, admin = setup(api)
    api.events(api_project(api, p), exception_event(event_id="a" * 32))
    api.call("PUT", f"/api/v4/projects/{p}/retention", token, json={"max_age_days": 7})

    storage = api.call("GET", "/api/v4/application/storage", admin).json()
    assert storage["stored"][0]["items"] == 1
    assert storage["largest_projects"][0]["path"] == "acme/web"
    assert storage["used_bytes"] > 0 and storage["disk_budget_bytes"] == 0
    assert [e["action"] for e in api.call("GET", "/api/v4/audit_events", admin).json()] == [
        "retention.update"
    ]
    assert api.call("GET", "/api/v4/application/storage", token).status_code == 403
    assert api.call("GET", "/api/v4/audit_events", token).status_code == 403


def test_quotas_are_set_validated_and_audited(api: Api) -> None:
    p, token, _ = setup(api)
    other_project = api.project("acme/other").id
    with api.db.write() as conn:
        key = client_keys.create(conn, p)
        other = client_keys.create(conn, other_project)
    url = f"/api/v4/projects/{p}/quotas"
    assert api.call("GET", url, token).json() == {
        "quotas": [],
        "spike_protection": {"enabled": False, "multiplier": 10.0},
        "spike_refused_last_hour": 0,
    }
    body = {
        "quotas": [
            {"category": "error", "window": "minute", "max_count": 100},
            {"category": "error", "window": "day", "max_count": 10000, "key_id": key.id},
        ],
        "spike_protection": {"enabled": True, "multiplier": 5},
    }
    saved = api.call("PUT", url, token, json=body)
    assert saved.status_code == 200
    assert saved.json()["quotas"][1] == {
        "category": "error",
        "window": "day",
        "max_count": 10000,
        "key_id": key.id,
    }
    assert api.call("GET", url, token).json() == saved.json()
    bad_bodies = [
        {"quotas": [{"category": "nonsense", "window": "minute", "max_count": 1}]},
        {"quotas": [{"window": "week", "max_count": 1}]},
        {"quotas": [{"window": "minute", "max_count": -1}]},
        {"quotas": [{"window": "minute", "max_count": 1, "key_id": other.id}]},
        {"spike_protection": {"enabled": True, "multiplier": 1}},
        {"quotas": [{"window": "minute", "max_count": 1}] * 51},
    ]
    for bad in bad_bodies:
        assert api.call("PUT", url, token, json=bad).status_code == 400, bad
    assert api.call("GET", url, token).json() == saved.json()  # nothing half-saved
    trail = api.call("GET", f"/api/v4/projects/{p}/audit_events", token).json()
    assert trail[0]["action"] == "quotas.update"
