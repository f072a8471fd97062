"""Deletion requests (an error, one user's events, a project's data) and the rows they
remove besides events, a small batch per call.

A request is a row in ``deletion_jobs``; the lifecycle loop (or the request itself,
within a time budget) works through it in short transactions, so a large deletion never
holds the database's write lock for long.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import ColumnElement, Connection, Table, select, tuple_, update

from tracebox.store import error_hashes
from tracebox.store.tables import (
    deletion_jobs,
    dropped_items,
    error_hourly,
    error_tags,
    error_users,
    errors,
    events,
    project_environments,
    session_aggregates,
    sessions,
    zstd_dictionaries,
)


class JobKind(StrEnum):
    ERROR = "error"  # an error and its events
    USER = "user"  # every event of one user in a project (a privacy request)
    PROJECT = "project"  # every error, event and session of a project


class JobState(StrEnum):
    PENDING = "pending"
    DONE = "done"


@dataclass(frozen=True)
class DeletionJob:
    id: int
    project_id: int
    kind: JobKind
    target: str  # the error id, "email:a@example.com" (until done), or ""
    state: JobState
    position: int  # the last events.id a user deletion examined
    events_deleted: int
    author_id: int | None
    created_at: float
    finished_at: float | None


def create(
    conn: Connection, project_id: int, kind: JobKind, target: str, author_id: int | None
) -> DeletionJob:
    row = {
        "project_id": project_id,
        "kind": kind.value,
        "target": target,
        "state": JobState.PENDING.value,
        "position": 0,
        "events_deleted": 0,
        "author_id": author_id,
        "created_at": time.time(),
        "finished_at": None,
    }
    job_id = conn.execute(deletion_jobs.insert().values(**row).returning(deletion_jobs.c.id))
    return _job({**row, "id": int(job_id.scalar_one())})


def get(conn: Connection, job_id: int) -> DeletionJob | None:
    row = conn.execute(select(deletion_jobs).where(deletion_jobs.c.id == job_id)).first()
    return _job(dict(row._mapping)) if row else None


def pending(conn: Connection, limit: int, before: float | None = None) -> list[DeletionJob]:
    """Unfinished jobs, oldest first (created before ``before``, when given)."""
    t = deletion_jobs
    query = select(t).where(t.c.state == JobState.PENDING.value).order_by(t.c.id).limit(limit)
    if before is not None:
        query = query.where(t.c.created_at < before)
    return [_job(dict(r._mapping)) for r in conn.execute(query)]


def list_for_project(conn: Connection, project_id: int, limit: int) -> list[DeletionJob]:
    t = deletion_jobs
    query = select(t).where(t.c.project_id == project_id).order_by(t.c.id.desc()).limit(limit)
    return [_job(dict(r._mapping)) for r in conn.execute(query)]


def advance(conn: Connection, job_id: int, *, position: int, deleted: int) -> None:
    t = deletion_jobs
    conn.execute(
        update(t)
        .where(t.c.id == job_id)
        .values(position=position, events_deleted=t.c.events_deleted + deleted)
    )


def finish(conn: Connection, job_id: int, *, target: str) -> None:
    """Mark done; ``target`` replaces what was asked for (a user's identifier is not
    kept once their data is gone)."""
    conn.execute(
        update(deletion_jobs)
        .where(deletion_jobs.c.id == job_id)
        .values(state=JobState.DONE.value, finished_at=time.time(), target=target)
    )


def _job(m: dict[str, object]) -> DeletionJob:
    m["kind"] = JobKind(str(m["kind"]))
    m["state"] = JobState(str(m["state"]))
    return DeletionJob(**m)  # type: ignore[arg-type]


# --- rows other than events -------------------------------------------------------------


def delete_error_rows(conn: Connection, error_id: int, limit: int) -> tuple[int, bool]:
    """Delete up to ``limit`` of the error's user and hourly rows; once none is left and
    it has no event, the error itself. Returns (rows deleted, whether the error is gone)."""
    removed = 0
    for table in (error_users, error_hourly, error_tags):
        removed += _delete_some(conn, table, table.c.error_id == error_id, limit - removed)
        if removed >= limit:
            return removed, False
    project_id = conn.execute(select(errors.c.project_id).where(errors.c.id == error_id)).scalar()
    if project_id is None:
        return removed, True
    if conn.execute(select(events.c.id).where(events.c.error_id == error_id).limit(1)).first():
        return removed, False
    # The digests' cached hash -> error ids of the project must go first (error_hashes).
    error_hashes.bump_epoch(conn, int(project_id))
    gone = conn.execute(errors.delete().where(errors.c.id == error_id)).rowcount
    return removed + gone, True


def project_error_ids(conn: Connection, project_id: int, limit: int) -> list[int]:
    query = select(errors.c.id).where(errors.c.project_id == project_id).limit(limit)
    return list(conn.execute(query).scalars())


def delete_project_rows(conn: Connection, project_id: int, limit: int) -> int:
    """Delete up to ``limit`` of the project's sessions, session aggregates, dropped-item
    counters, environments seen and dictionaries (errors and events go separately). 0 when
    none is left."""
    removed = 0
    tables = (sessions, session_aggregates, dropped_items, project_environments, zstd_dictionaries)
    for table in tables:
        removed += _delete_some(conn, table, table.c.project_id == project_id, limit - removed)
        if removed >= limit:
            break
    return removed


def _delete_some(conn: Connection, table: Table, where: ColumnElement[bool], limit: int) -> int:
    """Delete at most ``limit`` rows matching ``where``, by primary key."""
    if limit <= 0:
        return 0
    keys = list(table.primary_key.columns)
    some = select(*keys).where(where).limit(limit)
    key = keys[0] if len(keys) == 1 else tuple_(*keys)
    return int(conn.execute(table.delete().where(key.in_(some))).rowcount)


def forget_user_keys(conn: Connection, project_id: int, keys: Sequence[str]) -> None:
    """Delete the distinct-user rows (``id:42``, ``email:...``) of these users in the
    project's errors; ``errors.users_count`` is left as it is."""
    if not keys:
        return
    project_errors = select(errors.c.id).where(errors.c.project_id == project_id)
    conn.execute(
        error_users.delete().where(
            error_users.c.user_key.in_(list(keys)), error_users.c.error_id.in_(project_errors)
        )
    )


def forget_user_tags(
    conn: Connection, error_ids: Sequence[int], pairs: Sequence[tuple[str, str]]
) -> None:
    """Delete the tag values (``user.email`` = ...) that name a deleted user in these
    errors (their primary key: error, key, value)."""
    if not error_ids:
        return
    for key, value in pairs:
        conn.execute(
            error_tags.delete().where(
                error_tags.c.error_id.in_(list(error_ids)),
                error_tags.c.key == key,
                error_tags.c.value == value,
            )
        )


def replace_session_users(conn: Connection, project_id: int, did: str, token: str) -> None:
    """Give the sessions of one distinct id (``did``) another, meaningless one."""
    for table in (sessions, session_aggregates):
        conn.execute(
            update(table)
            .where(table.c.project_id == project_id, table.c.did == did)
            .values(did=token)
        )
