"""Deletion on request: an error with its events, one user's events (exactly those), a
project's data; each audited."""

from __future__ import annotations

import threading
import time

import sqlalchemy as sa

from tests.lifecycle.helpers import event, event_ids, project, store
from tracebox.config import Settings
from tracebox.lifecycle import deletion as lifecycle_deletion
from tracebox.lifecycle.batches import Batches
from tracebox.lifecycle.cleanup import CleanupLoop
from tracebox.lifecycle.deletion import Author, UserField, Worker, user_target
from tracebox.models import Project
from tracebox.store import Database, audit, projects, usage
from tracebox.store.deletion import JobKind, JobState
from tracebox.store.tables import (
    deletion_jobs,
    error_tags,
    error_users,
    errors,
    project_environments,
    sessions,
)

ALICE = Author(7, "alice")


def run(db: Database, project_id: int, kind: JobKind, target: str) -> int:
    """Request a deletion as alice and work it to the end; return events deleted."""
    with db.read() as conn:
        found = projects.get(conn, project_id)
    assert isinstance(found, Project)
    job = lifecycle_deletion.request(db, found, kind, target, ALICE)
    worker = Worker(
        db, Batches(db, target_ms=25, initial=3, sleep=lambda _: None), threading.Event()
    )
    done = worker.work(job)
    assert done.state is JobState.DONE
    return done.events_deleted


def user_events(db: Database, project_id: int) -> dict[str, str]:
    """event id -> the message of the project's events (a message names its user here)."""
    from tracebox.store import errors_read

    with db.read() as conn:
        ids = list(
            conn.execute(sa.select(errors.c.id).where(errors.c.project_id == project_id)).scalars()
        )
        found = {}
        for error_id in ids:
            for e in errors_read.list_events(conn, error_id, after=None, before=None, limit=100):
                found[e.event_id] = e.payload["exception"]["values"][0]["value"]
    return found


def test_deleting_a_user_removes_exactly_their_events_by_id_email_or_ip(db: Database) -> None:
    p, other = project(db, "acme/web"), project(db, "acme/other")
    people = [
        {"id": "42", "email": "Ann@Example.com", "ip_address": "198.51.100.1"},
        {"id": "43", "email": "bob@example.com", "ip_address": "198.51.100.2"},
        {"email": "ann@example.com"},  # the same person, without an id
        {"ip_address": "198.51.100.1"},  # the same address, no other identity
        {"id": "420", "email": "ann@example.com.evil"},  # near misses stay
    ]
    for i in range(4):
        for n, user in enumerate(people):
            store(db, p, event(f"p{n}-{i}", user=user))
    store(db, other, event("other-ann", user=people[0]))  # another project: not touched
    before = user_events(db, p)

    assert run(db, p, JobKind.USER, user_target(UserField.EMAIL, "ann@example.com")) == 8
    after = user_events(db, p)
    assert sorted(after.values()) == sorted(
        v for v in before.values() if not v.startswith(("p0-", "p2-"))
    )
    assert run(db, p, JobKind.USER, user_target(UserField.IP_ADDRESS, "198.51.100.1")) == 4
    assert run(db, p, JobKind.USER, user_target(UserField.ID, "43")) == 4
    assert sorted(user_events(db, p).values()) == [f"p4-{i}" for i in range(4)]
    assert list(user_events(db, other).values()) == ["other-ann"]


def test_a_deleted_users_identity_is_gone_and_distinct_counts_stay(db: Database) -> None:
    p = project(db, "acme/web")
    store(db, p, event("x", user={"id": "42"}), event("x", user={"id": "43"}))
    with db.write() as conn:
        conn.execute(
            sessions.insert(),
            [
                {
                    "project_id": p,
                    "sid": f"s{i}",
                    "did": did,
                    "release": "r",
                    "environment": "e",
                    "started": 1.0,
                    "timestamp": 1.0,
                    "seq": 0,
                    "status": "exited",
                    "errors": 0,
                }
                for i, did in enumerate(["42", "42", "43"])
            ],
        )
    with db.read() as conn:
        users_before = conn.execute(sa.select(errors.c.users_count)).scalar_one()

    run(db, p, JobKind.USER, user_target(UserField.ID, "42"))

    with db.read() as conn:
        keys = set(conn.execute(sa.select(error_users.c.user_key)).scalars())
        tags = set(conn.execute(sa.select(error_tags.c.key, error_tags.c.value)).all())
        dids = list(conn.execute(sa.select(sessions.c.did).order_by(sessions.c.sid)).scalars())
        users_after = conn.execute(sa.select(errors.c.users_count)).scalar_one()
    assert keys == {"id:43"}
    assert ("user.id", "43") in tags and ("user.id", "42") not in tags
    assert dids[0] == dids[1] != "42" and dids[2] == "43"  # still one distinct user, unnamed
    assert users_after == users_before == 2


def test_deleting_an_error_removes_it_with_its_events_and_nothing_else(db: Database) -> None:
    p = project(db, "acme/web")
    store(db, p, *[event("doomed") for _ in range(7)], event("kept", exc_type="Kept"))
    with db.read() as conn:
        doomed = conn.execute(
            sa.select(errors.c.id).where(errors.c.type == "ValueError")
        ).scalar_one()

    assert run(db, p, JobKind.ERROR, str(doomed)) == 7

    with db.read() as conn:
        assert list(conn.execute(sa.select(errors.c.type)).scalars()) == ["Kept"]
        assert usage.stored(conn, p)["events"].items == 1
    assert len(event_ids(db, p)) == 1


def test_erasing_a_projects_data_leaves_other_projects_alone(db: Database) -> None:
    p, other = project(db, "acme/web"), project(db, "acme/other")
    for target in (p, other):
        store(db, target, *[event(f"e{i}", exc_type=f"T{i % 3}") for i in range(10)])

    assert run(db, p, JobKind.PROJECT, "") == 10

    with db.read() as conn:
        assert list(conn.execute(sa.select(errors.c.project_id).distinct()).scalars()) == [other]
        assert projects.get(conn, p) is not None  # the project and its settings stay
        seen = sa.select(project_environments.c.project_id).distinct()
        assert list(conn.execute(seen).scalars()) == [other]  # environments seen go too
    assert event_ids(db, p) == [] and len(event_ids(db, other)) == 10


def test_every_deletion_is_audited_without_keeping_the_users_identifier(db: Database) -> None:
    p = project(db, "acme/web")
    store(db, p, event("x", user={"email": "ann@example.com"}))

    run(db, p, JobKind.USER, user_target(UserField.EMAIL, "ann@example.com"))

    with db.read() as conn:
        trail = audit.list_page(conn, project_id=p, before_id=None, limit=10)
    request, finished = trail[1], trail[0]
    assert (request.author_name, request.action) == ("alice", "user_data.delete")
    assert request.target.startswith("events of user email sha256:")
    assert "ann@example.com" not in repr(trail)
    assert finished.action == "deletion.finished" and finished.details["events_deleted"] == 1
    assert time.time() - request.created_at < 60


def test_the_cleanup_loop_finishes_a_deletion_its_request_left(
    db: Database, settings: Settings
) -> None:
    p = project(db, "acme/web")
    store(db, p, *[event("doomed") for _ in range(3)])
    with db.read() as conn:
        found = projects.get(conn, p)
    assert found is not None
    job = lifecycle_deletion.request(db, found, JobKind.PROJECT, "", ALICE)
    cleaner = CleanupLoop(db, settings)
    assert cleaner.deletions(threading.Event()) == []  # its request may still be on it
    with db.write() as conn:
        conn.execute(deletion_jobs.update().values(created_at=time.time() - 60))

    assert cleaner.deletions(threading.Event()) == [job.id]
    assert event_ids(db, p) == []
