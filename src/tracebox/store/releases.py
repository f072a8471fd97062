"""Releases: health from sessions per release and environment (docs/design.md,
"Sessions"), and the release records and deploys sentry-cli creates (docs/sourcemaps.md).
Events, sessions and sentry-cli all name a release by its version: one releases model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Connection,
    Select,
    case,
    delete,
    distinct,
    func,
    literal,
    select,
    union_all,
    update,
)

from tracebox.store.dialect import insert
from tracebox.store.tables import deploys, errors, sessions
from tracebox.store.tables import releases as release_rows
from tracebox.store.tables import session_aggregates as agg

ERRORED_STATES = ("errored", "abnormal", "unhandled")


@dataclass
class ReleaseCounts:
    release: str
    environment: str
    sessions: int = 0
    crashed: int = 0
    errored: int = 0  # errored, abnormal or unhandled, not crashed
    users: int = 0
    crashed_users: int = 0
    last_started: float = 0.0


def release_counts(conn: Connection, project_id: int) -> list[ReleaseCounts]:
    """Counts per (release, environment), the most recently started release first.
    Individual sessions (one row per sid) and pre-aggregated ones add up; users are
    distinct ``did`` values over both (ix_sessions_release, ix_session_aggregates_release)."""
    found: dict[tuple[str, str], ReleaseCounts] = {}

    def counts(release: str, environment: str) -> ReleaseCounts:
        return found.setdefault((release, environment), ReleaseCounts(release, environment))

    for row in conn.execute(_session_totals(project_id)):
        c = counts(row.release, row.environment)
        c.sessions += int(row.total)
        c.crashed += int(row.crashed or 0)
        c.errored += int(row.errored or 0)
        c.last_started = max(c.last_started, float(row.last_started))
    for row in conn.execute(_user_totals(project_id)):
        c = counts(row.release, row.environment)
        c.users, c.crashed_users = int(row.users), int(row.crashed_users or 0)
    return sorted(found.values(), key=lambda c: (-c.last_started, c.release, c.environment))


def _session_totals(project_id: int) -> Select[Any]:
    s = sessions.c
    crashed = case((s.status == "crashed", 1), else_=0)
    errored = case(
        ((s.status != "crashed") & ((s.errors > 0) | s.status.in_(ERRORED_STATES)), 1), else_=0
    )
    single = select(
        s.release,
        s.environment,
        literal(1).label("total"),
        crashed.label("crashed"),
        errored.label("errored"),
        s.started,
    ).where(s.project_id == project_id)
    a = agg.c
    grouped = select(
        a.release,
        a.environment,
        (a.exited + a.errored + a.crashed + a.abnormal).label("total"),
        a.crashed.label("crashed"),
        (a.errored + a.abnormal).label("errored"),
        a.started,
    ).where(a.project_id == project_id)
    both = union_all(single, grouped).subquery()
    return select(
        both.c.release,
        both.c.environment,
        func.sum(both.c.total).label("total"),
        func.sum(both.c.crashed).label("crashed"),
        func.sum(both.c.errored).label("errored"),
        func.max(both.c.started).label("last_started"),
    ).group_by(both.c.release, both.c.environment)


def _user_totals(project_id: int) -> Select[Any]:
    s, a = sessions.c, agg.c
    single = select(
        s.release, s.environment, s.did, case((s.status == "crashed", 1), else_=0).label("crashed")
    ).where(s.project_id == project_id, s.did.is_not(None))
    grouped = select(
        a.release, a.environment, a.did, case((a.crashed > 0, 1), else_=0).label("crashed")
    ).where(a.project_id == project_id, a.did.is_not(None))
    both = union_all(single, grouped).subquery()
    crashed_did = case((both.c.crashed == 1, both.c.did), else_=None)
    return select(
        both.c.release,
        both.c.environment,
        func.count(distinct(both.c.did)).label("users"),
        func.count(distinct(crashed_did)).label("crashed_users"),
    ).group_by(both.c.release, both.c.environment)


# --- release records and deploys (sentry-cli; migration 0006_sourcemaps) ----------------


@dataclass(frozen=True)
class ReleaseRow:
    id: int
    project_id: int
    version: str
    url: str | None
    created_at: float
    date_started: float | None
    date_released: float | None


@dataclass(frozen=True)
class DeployRow:
    id: int
    release_id: int
    environment: str
    name: str | None
    url: str | None
    date_started: float | None
    date_finished: float


def _release(row: Any) -> ReleaseRow:
    return ReleaseRow(
        id=int(row.id),
        project_id=int(row.project_id),
        version=row.version,
        url=row.url,
        created_at=float(row.created_at),
        date_started=row.date_started,
        date_released=row.date_released,
    )


def get(conn: Connection, project_id: int, version: str) -> ReleaseRow | None:
    row = conn.execute(
        select(release_rows).where(
            release_rows.c.project_id == project_id, release_rows.c.version == version
        )
    ).first()
    return None if row is None else _release(row)


def ensure(conn: Connection, project_id: int, version: str, *, now: float) -> ReleaseRow:
    """The project's release ``version``, created if it is new (concurrency-safe)."""
    stmt = insert(conn, release_rows).values(project_id=project_id, version=version, created_at=now)
    conn.execute(stmt.on_conflict_do_nothing(index_elements=["project_id", "version"]))
    found = get(conn, project_id, version)
    assert found is not None
    return found


def update_release(conn: Connection, release_id: int, **values: Any) -> None:
    """Set ``url``, ``date_started``, ``date_released`` or ``version`` of a release."""
    if values:
        conn.execute(update(release_rows).where(release_rows.c.id == release_id).values(**values))


def delete_release(conn: Connection, release_id: int) -> None:
    conn.execute(delete(release_rows).where(release_rows.c.id == release_id))


def list_release_rows(conn: Connection, project_ids: list[int], *, limit: int) -> list[ReleaseRow]:
    """Releases of the projects, newest first (uq_releases_project_version per project)."""
    rows = conn.execute(
        select(release_rows)
        .where(release_rows.c.project_id.in_(project_ids))
        .order_by(release_rows.c.created_at.desc(), release_rows.c.id.desc())
        .limit(limit)
    )
    return [_release(r) for r in rows]


def add_deploy(
    conn: Connection,
    release_id: int,
    *,
    environment: str,
    name: str | None,
    url: str | None,
    date_started: float | None,
    date_finished: float,
) -> DeployRow:
    key = conn.execute(
        deploys.insert().values(
            release_id=release_id,
            environment=environment,
            name=name,
            url=url,
            date_started=date_started,
            date_finished=date_finished,
        )
    ).inserted_primary_key
    assert key is not None
    return DeployRow(int(key[0]), release_id, environment, name, url, date_started, date_finished)


def list_deploys(conn: Connection, release_ids: list[int]) -> list[DeployRow]:
    """Deploys of the releases, newest first (ix_deploys_release)."""
    rows = conn.execute(
        select(deploys)
        .where(deploys.c.release_id.in_(release_ids))
        .order_by(deploys.c.date_finished.desc(), deploys.c.id.desc())
    )
    return [
        DeployRow(
            int(r.id),
            int(r.release_id),
            r.environment,
            r.name,
            r.url,
            r.date_started,
            float(r.date_finished),
        )
        for r in rows
    ]


def new_errors_by_release(conn: Connection, project_id: int) -> dict[str, int]:
    """Errors first seen in each release: what "new errors" on the releases page counts."""
    rows = conn.execute(
        select(errors.c.first_release, func.count().label("n"))
        .where(errors.c.project_id == project_id, errors.c.first_release.is_not(None))
        .group_by(errors.c.first_release)
    )
    return {r.first_release: int(r.n) for r in rows}
