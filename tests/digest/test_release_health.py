"""Release health from session updates as SDKs send them (issue 12, item 2): the
``unhandled`` status of @sentry/browser 8+, and a user id set after the session began."""

from __future__ import annotations

import time
import uuid
from typing import Any

import orjson

from tests.digest.test_worker import spool
from tracebox.config import Settings
from tracebox.digest.worker import DigestWorker
from tracebox.spool import RecordKind, SpoolReader, SpoolRecord
from tracebox.store import Database, projects
from tracebox.tracking import IntegratedSource

RELEASE = "shop@1.2.3"


def session_record(project_id: int, received: float, **fields: Any) -> bytes:
    started = received - 30
    payload = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "attrs": {"release": RELEASE, "environment": "production"},
        **fields,
    }
    record = SpoolRecord(
        kind=RecordKind.SESSION,
        project_id=project_id,
        key_id=1,
        received=received,
        payload=orjson.dumps(payload),
    )
    return record.encode()


def digest(settings: Settings, db: Database, records: list[bytes]) -> None:
    spool(settings, records)
    DigestWorker(db, SpoolReader(settings.spool_dir), batch_size=100).drain()


def test_unhandled_status_and_a_late_user_id_count_in_release_health(
    settings: Settings, db: Database
) -> None:
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
    now = time.time()
    browser, healthy = str(uuid.uuid4()), str(uuid.uuid4())
    records = [
        # @sentry/browser 7/8: the first update has no user; setUser() comes later.
        session_record(project.id, now, sid=browser, init=True, status="ok", errors=0),
        session_record(
            project.id, now, sid=browser, seq=2, status="unhandled", errors=1, did="user-7"
        ),
        # Updates after a terminal state change nothing (as Relay).
        session_record(project.id, now, sid=browser, seq=3, status="exited", errors=1),
        session_record(project.id, now, sid=healthy, init=True, status="exited", did="user-8"),
    ]
    digest(settings, db, records)
    (health,) = IntegratedSource(db, project.id).releases()
    assert (health.release, health.sessions, health.crashed, health.errored) == (RELEASE, 2, 0, 1)
    assert (health.users, health.crashed_users) == (2, 0)
    assert health.crash_free_sessions == 100.0


def test_a_late_user_id_arriving_in_a_second_batch_is_kept(
    settings: Settings, db: Database
) -> None:
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
    now, sid = time.time(), str(uuid.uuid4())
    digest(settings, db, [session_record(project.id, now, sid=sid, init=True)])
    (before,) = IntegratedSource(db, project.id).releases()
    assert before.users == 0
    digest(settings, db, [session_record(project.id, now, sid=sid, seq=5, did="u-1")])
    # A later update without the user keeps the one already known.
    digest(settings, db, [session_record(project.id, now, sid=sid, seq=6, status="exited")])
    (after,) = IntegratedSource(db, project.id).releases()
    assert (after.sessions, after.users, after.errored) == (1, 1, 0)
