"""A bulk action over 10,000 errors ("all matching this query"), in bounded batches."""

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
from tracebox.store.tables import error_activity, errors

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
