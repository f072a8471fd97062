"""Deletion on request: an error with its events, every event of one user in a project
(a privacy request), or a project's data. Audited; done in small batches.

``request`` records the job and the audit event; ``work`` advances a job until it is
done, a deadline passes or the loop is told to stop. The request handler runs ``work``
within a short time budget, so small deletions are finished when it answers; the
cleanup loop finishes the rest.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from enum import StrEnum
from typing import Any

from sqlalchemy import Connection

from tracebox.config import Settings
from tracebox.errors import BadRequest
from tracebox.lifecycle.batches import Batches
from tracebox.lifecycle.kinds import PRUNABLE_KINDS, Prunable
from tracebox.lifecycle.removal import Removal, account, remove_events, unlink
from tracebox.models import Project
from tracebox.store import Database, audit, deletion, dictionaries, payloads, retention
from tracebox.store.audit import Author
from tracebox.store.deletion import DeletionJob, JobKind, JobState
from tracebox.store.usage import Outcome

SYSTEM = Author(None, "tracebox")
MAX_IDENTIFIER_LENGTH = 255  # as the user fields the digest keeps (user_key column)
# A request deletes this long itself, so small deletions are done when it answers; the
# cleanup loop finishes larger ones (it polls every few seconds).
INLINE_SECONDS = 2.0


class UserField(StrEnum):
    """What identifies a user in a privacy request (the event's ``user`` object)."""

    ID = "id"
    EMAIL = "email"
    IP_ADDRESS = "ip_address"


def user_target(field: UserField, value: str) -> str:
    value = value.strip()
    if not value or len(value) > MAX_IDENTIFIER_LENGTH or "\x00" in value:
        raise BadRequest(f"{field.value} must be 1 to {MAX_IDENTIFIER_LENGTH} characters")
    return f"{field.value}:{value}"


def masked(target: str) -> str:
    """A user's identifier as the audit log keeps it: the kind and a short SHA-256, enough
    to confirm a given request was carried out without keeping the identifier."""
    field, _, value = target.partition(":")
    return f"{field} sha256:{hashlib.sha256(value.encode()).hexdigest()[:16]}"


def request(
    db: Database, project: Project, kind: JobKind, target: str, author: Author, **details: Any
) -> DeletionJob:
    """Record a deletion job and its audit event in one transaction."""
    shown = masked(target) if kind is JobKind.USER else target
    with db.write() as conn:
        job = deletion.create(conn, project.id, kind, target, author.id)
        audit.record(
            conn,
            author,
            project_id=project.id,
            project_path=project.path,
            action=f"{kind.value}_data.delete" if kind is not JobKind.ERROR else "error.delete",
            target=_describe(kind, shown),
            details={"job_id": job.id, **details},
        )
    return job


def delete(
    db: Database,
    settings: Settings,
    project: Project,
    kind: JobKind,
    target: str,
    author: Author,
    **details: Any,
) -> DeletionJob:
    """Request a deletion and work on it for up to ``INLINE_SECONDS``."""
    job = request(db, project, kind, target, author, **details)
    batches = Batches(db, target_ms=settings.cleanup_lock_target_ms)
    return Worker(db, batches, threading.Event()).work(job, time.monotonic() + INLINE_SECONDS)


def _describe(kind: JobKind, target: str) -> str:
    if kind is JobKind.ERROR:
        return f"error {target} and its events"
    if kind is JobKind.USER:
        return f"events of user {target}"
    return "all errors, events and sessions of the project"


class Worker:
    """Advances deletion jobs a batch at a time."""

    def __init__(
        self,
        db: Database,
        batches: Batches,
        stop: threading.Event,
        *,
        kinds: tuple[Prunable, ...] = PRUNABLE_KINDS,
    ) -> None:
        self.db = db
        self.batches = batches
        self.stop = stop
        self.kinds = kinds

    def run_pending(self, deadline: float | None = None) -> list[DeletionJob]:
        """Work on every pending job, oldest first; return those finished. A job newer
        than its request's own time budget is left to that request."""
        with self.db.read() as conn:
            jobs = deletion.pending(conn, limit=100, before=time.time() - 2 * INLINE_SECONDS)
        done = []
        for job in jobs:
            finished = self.work(job, deadline)
            if finished.state is JobState.DONE:
                done.append(finished)
            if self._out_of_time(deadline):
                break
        return done

    def work(self, job: DeletionJob, deadline: float | None = None) -> DeletionJob:
        step = {JobKind.ERROR: self._error_step, JobKind.USER: self._user_step}.get(
            job.kind, self._project_step
        )
        while job.state is JobState.PENDING and not self._out_of_time(deadline):
            job = step(job)
        return job

    def _out_of_time(self, deadline: float | None) -> bool:
        return self.stop.is_set() or (deadline is not None and time.monotonic() > deadline)

    # --- an error -------------------------------------------------------------------

    def _error_step(self, job: DeletionJob) -> DeletionJob:
        error_id = int(job.target)
        with self.db.read() as conn:
            ids = retention.events_of_error(conn, error_id, self.batches.size)
        if ids:
            return self._remove(job, ids, reason="error", position=job.position)
        gone = self.batches.write(lambda conn: self._delete_error(conn, error_id), rows=0)
        return self._finish(job, job.target) if gone else self._reload(job)

    def _delete_error(self, conn: Connection, error_id: int) -> bool:
        return deletion.delete_error_rows(conn, error_id, self.batches.size)[1]

    # --- a user's events -------------------------------------------------------------

    def _user_step(self, job: DeletionJob) -> DeletionJob:
        field, _, value = job.target.partition(":")
        with self.db.read() as conn:
            rows = retention.scan_project(
                conn, job.project_id, after_id=job.position, limit=self.batches.size
            )
            find = dictionaries.lookup(conn)
            matched = [(e, u) for e in rows if (u := _user_matching(e, find, field, value))]
        if not rows:
            self.batches.write(lambda conn: self._forget_user(conn, job), rows=0)
            return self._finish(job, masked(job.target))
        keys = sorted({e.user_key for e, _ in matched if e.user_key})
        errors = sorted({e.error_id for e, _ in matched})
        tags = sorted({(f"user.{f}", str(u[f])) for _, u in matched for f in USER_TAGS if u.get(f)})

        def forget(conn: Connection) -> None:
            deletion.forget_user_keys(conn, job.project_id, keys)
            deletion.forget_user_tags(conn, errors, tags)

        return self._remove(
            job, [e.id for e, _ in matched], reason="user", position=rows[-1].id, also=forget
        )

    def _forget_user(self, conn: Connection, job: DeletionJob) -> None:
        """The user's events are gone. Their identifier still names distinct-user rows:
        error users are forgotten (``users_count`` keeps counting them), and sessions'
        ``did`` gets a random token, so release health's user counts stay exact."""
        field, _, value = job.target.partition(":")
        key = {"id": "id", "email": "email", "ip_address": "ip"}[field]
        deletion.forget_user_keys(conn, job.project_id, [f"{key}:{value}"])
        token = f"deleted:{secrets.token_hex(8)}"
        deletion.replace_session_users(conn, job.project_id, value, token)

    # --- a project's data -------------------------------------------------------------

    def _project_step(self, job: DeletionJob) -> DeletionJob:
        project_id = job.project_id
        with self.db.read() as conn:
            ids = retention.events_of_project(conn, project_id, self.batches.size)
        if ids:
            return self._remove(job, ids, reason="project", position=job.position)
        for kind in self.kinds:
            if kind.of_project is not None and self._erase_kind(kind, project_id):
                return job
        with self.db.read() as conn:
            error_ids = deletion.project_error_ids(conn, project_id, 1)
        if error_ids:
            self.batches.write(lambda conn: self._delete_error(conn, error_ids[0]), rows=0)
            return job
        size = self.batches.size
        rows = self.batches.write(
            lambda conn: deletion.delete_project_rows(conn, project_id, size), rows=size
        )
        return job if rows else self._finish(job, "")

    def _erase_kind(self, kind: Prunable, project_id: int) -> int:
        assert kind.of_project is not None
        erase, size = kind.of_project, self.batches.size

        def work(conn: Connection) -> Removal:
            removed = erase(conn, project_id, size)
            return account(conn, kind, removed)

        removal = self.batches.write(work, rows=size)
        unlink(removal.files)
        return sum(removal.other.values())

    # --- shared -----------------------------------------------------------------------

    def _remove(
        self,
        job: DeletionJob,
        ids: list[int],
        *,
        reason: str,
        position: int,
        also: Callable[[Connection], None] | None = None,
    ) -> DeletionJob:
        def work(conn: Connection) -> Removal:
            removal = remove_events(
                conn, ids, outcome=Outcome.DELETED, reason=reason, kinds=self.kinds
            )
            if also is not None:
                also(conn)
            deletion.advance(conn, job.id, position=position, deleted=removal.total)
            return removal

        removal = self.batches.write(work, rows=max(len(ids), 1))
        unlink(removal.files)
        return self._reload(job)

    def _finish(self, job: DeletionJob, target: str) -> DeletionJob:
        def work(conn: Connection) -> None:
            deletion.finish(conn, job.id, target=target)
            deleted = getattr(deletion.get(conn, job.id), "events_deleted", 0)
            audit.record(
                conn,
                SYSTEM,
                project_id=job.project_id,
                project_path=None,
                action="deletion.finished",
                target=f"deletion {job.id}",
                details={
                    "job_id": job.id,
                    "events_deleted": deleted,
                },
            )

        self.batches.write(work, rows=0)
        return self._reload(job)

    def _reload(self, job: DeletionJob) -> DeletionJob:
        with self.db.read() as conn:
            found = deletion.get(conn, job.id)
        assert found is not None
        return found


USER_TAGS = ("id", "email", "username")  # the digest's user.* tags (protocol.tags)


def _user_matching(
    event: retention.ScannedEvent, find: payloads.DictionaryLookup, field: str, value: str
) -> dict[str, Any] | None:
    """The event's ``user`` when its ``field`` is ``value`` (an email in any case)."""
    user = payloads.decode(event.payload, find).get("user")
    if not isinstance(user, dict) or user.get(field) is None:
        return None
    found = str(user[field])
    if field == "email":
        return user if found.strip().lower() == value.lower() else None
    return user if found == value else None
