"""Release health: sessions per release and environment (docs/design.md, "Sessions")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Select, case, distinct, func, literal, select, union_all

from tracebox.store.tables import session_aggregates as agg
from tracebox.store.tables import sessions

ERRORED_STATES = ("errored", "abnormal")


@dataclass
class ReleaseCounts:
    release: str
    environment: str
    sessions: int = 0
    crashed: int = 0
    errored: int = 0  # errored or abnormal, not crashed
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
