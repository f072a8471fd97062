"""Bulk actions over 10,000 errors ("all matching this query"): resolve, assign and
ignore, in bounded batches, each error with its activity entry."""

from __future__ import annotations

import hashlib
import time

import pytest
from sqlalchemy import func, select

from tests.inprocess import Api
from tracebox.config import Settings
from tracebox.store import digest as store_digest
from tracebox.store.digest import PreparedEvent
from tracebox.store.payloads import PayloadEncoder
from tracebox.store.tables import error_activity, error_hashes, errors

pytestmark = pytest.mark.slow


def many_errors(api: Api, project_id: int, count: int) -> None:
    """``count`` errors of one event each, through the digest's batch write."""
    payload = PayloadEncoder().encode({"message": "bulk", "platform": "python"})
    now = time.time()
    rows = [
        PreparedEvent(
            project_id=project_id,
            event_id=hashlib.md5(f"event-{i}".encode()).hexdigest(),
            grouping_hash=hashlib.md5(f"error-{i}".encode()).hexdigest(),
            grouping_version="test",
            fingerprint="[]",
            title=f"Error {i}",
            type="Error",
            value=str(i),
            culprit="bulk",
            platform="python",
            level="error",
            timestamp=now - i,
            received=now,
            environment="production",
            release="web@1",
            user_key=None,
            payload=payload,
        )
        for i in range(count)
    ]
    for start in range(0, count, 2000):
        with api.db.write() as conn:
            store_digest.write_events(conn, rows[start : start + 2000])


def test_resolve_all_matching_10000_errors(api: Api, settings: Settings) -> None:
    owner = api.user("owner")
    project = api.project("acme/big", owner)
    token = api.token(owner)
    many_errors(api, project.id, 10_000)
    url = f"/api/v4/projects/{project.id}/error_tracking/errors"
    body = {"query": "is:unresolved Error", "status": "resolved"}
    r = api.call("PUT", url, token, json=body)
    assert r.json() == {"changed": 10_000, "batches": 100}, r.text
    with api.db.read() as conn:
        statuses = dict(
            conn.execute(
                select(errors.c.status, func.count())
                .where(errors.c.project_id == project.id)
                .group_by(errors.c.status)
            ).all()
        )
        entries = conn.execute(
            select(func.count()).where(error_activity.c.kind == "set_resolved")
        ).scalar_one()
    assert statuses == {"resolved": 10_000} and entries == 10_000
    # Assign all of them, then ignore them until 100 more events each: the same batches.
    body = {"query": "is:resolved", "assignee_id": owner.id}
    assert api.call("PUT", url, token, json=body).json() == {"changed": 10_000, "batches": 100}
    body = {"query": "is:resolved", "status": "ignored", "status_details": {"ignore_count": 100}}
    assert api.call("PUT", url, token, json=body).json() == {"changed": 10_000, "batches": 100}
    with api.db.read() as conn:
        rows = conn.execute(
            select(errors.c.status, errors.c.assignee_id, func.count())
            .where(errors.c.project_id == project.id)
            .group_by(errors.c.status, errors.c.assignee_id)
        ).all()
        kinds = dict(
            conn.execute(
                select(error_activity.c.kind, func.count()).group_by(error_activity.c.kind)
            ).all()
        )
    assert [tuple(r) for r in rows] == [("ignored", owner.id, 10_000)]
    assert kinds == {"set_resolved": 10_000, "assigned": 10_000, "set_ignored": 10_000}
    # Past the limit: 10,001 matching errors are refused, and nothing changes.
    with api.db.write() as conn:
        conn.execute(
            errors.update().where(errors.c.project_id == project.id).values(status="unresolved")
        )
    api.events(project, {"message": "one more", "level": "error"})
    assert settings.bulk_max_errors == 10_000
    r = api.call("PUT", url, token, json={"query": "is:unresolved", "status": "ignored"})
    assert r.status_code == 400
    assert r.json() == {
        "error": "query matches more than 10000 errors: narrow it, or change them in parts"
    }
    with api.db.read() as conn:
        ignored = conn.execute(
            select(func.count()).where(errors.c.status == "ignored")
        ).scalar_one()
    assert ignored == 0


def test_merge_10000_errors_into_one(api: Api) -> None:
    owner = api.user("owner")
    project = api.project("acme/big", owner)
    token = api.token(owner)
    many_errors(api, project.id, 10_000)
    with api.db.read() as conn:
        ids = list(conn.execute(select(errors.c.id).where(errors.c.project_id == project.id)))
    url = f"/api/v4/projects/{project.id}/error_tracking/errors"
    r = api.call("POST", url + "/merge", token, json={"ids": [i for (i,) in ids]})
    assert r.status_code == 200, r.text
    merged = r.json()
    assert merged["events_count"] == 10_000
    assert sum(b["count"] for b in merged["frequency"]) == 10_000
    with api.db.read() as conn:
        left = conn.execute(
            select(func.count()).where(errors.c.project_id == project.id)
        ).scalar_one()
        hashes = conn.execute(
            select(func.count()).where(error_hashes.c.error_id == merged["id"])
        ).scalar_one()
        merges = conn.execute(
            select(func.count()).where(error_activity.c.kind == "merge")
        ).scalar_one()
    assert (left, hashes) == (1, 10_000)
    assert merges == 100  # one entry per batch of TRACEBOX_BULK_BATCH_ERRORS
    # any of the 10,000 ids answers with the error they became
    r = api.call("GET", f"{url}/{ids[-1][0]}", token)
    assert r.status_code == 200 and r.json()["id"] == merged["id"]
