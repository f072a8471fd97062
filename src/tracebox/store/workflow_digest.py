"""The triage workflow's part of a digest batch, in the batch's own transaction.

``apply`` runs after the batch's events are inserted and the errors' counts updated:
- records the releases and environments the events reported (their order decides
  "resolved in the next release");
- reopens resolved errors by Sentry's rules (``tracebox.resolution``): an event of an
  older release is not a regression, one of the fixed or a newer release is;
- brings back ignored errors whose condition passed (a moment, N more events, N more
  users), also for ignored errors that received no event in this batch (time passed);
- puts new, regressed and unignored errors "for review";
and writes an activity entry for every change, by Tracebox itself (no user).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

from sqlalchemy import Connection, Select, Update, bindparam, select

from tracebox import resolution as rules
from tracebox.store import activity, seen
from tracebox.store.bulk import in_ids
from tracebox.store.tables import errors
from tracebox.store.triage import CLEARED_CONDITIONS

EXPIRED_PER_BATCH = 100  # ignored errors whose time passed, reopened per batch


class DigestedEvent(Protocol):
    @property
    def project_id(self) -> int: ...
    @property
    def event_id(self) -> str: ...
    @property
    def release(self) -> str | None: ...
    @property
    def environment(self) -> str | None: ...
    @property
    def timestamp(self) -> float: ...


@dataclass
class WorkflowOutcome:
    regressed: dict[int, str] = field(default_factory=dict)  # error id -> event id
    unignored: dict[int, str] = field(default_factory=dict)  # error id -> condition passed
    projects: dict[int, int] = field(default_factory=dict)  # error id -> project id


_STATE_COLUMNS = [
    errors.c.id,
    errors.c.project_id,
    errors.c.status,
    errors.c.resolution,
    errors.c.resolved_release,
    errors.c.resolved_at,
    errors.c.ignore_until,
    errors.c.ignore_count,
    errors.c.ignore_events_base,
    errors.c.ignore_user_count,
    errors.c.ignore_users_base,
    errors.c.events_count,
    errors.c.users_count,
]


def apply(
    conn: Connection,
    by_error: Mapping[int, Sequence[DigestedEvent]],
    now: float,
    *,
    created: set[int],
) -> WorkflowOutcome:
    """Call once per batch, after the counts were written, inside the batch transaction;
    ``created``: the errors this batch created."""
    outcome = WorkflowOutcome()
    _record_seen(conn, by_error)
    states = _states(conn, list(by_error))
    _reopen_regressions(conn, states, by_error, now, outcome)
    _unignore(conn, [s for s in states if s["status"] == "ignored"], now, outcome)
    _unignore(conn, _expired(conn, now), now, outcome)
    _new_for_review(conn, sorted(created & set(by_error)))
    return outcome


def _record_seen(conn: Connection, by_error: Mapping[int, Sequence[DigestedEvent]]) -> None:
    # Timestamps listed per value, min and max taken once: half the CPU of updating a
    # (first, last) pair per event (~2 us/event saved).
    releases: dict[tuple[int, str], list[float]] = defaultdict(list)
    environments: dict[tuple[int, str], list[float]] = defaultdict(list)
    for batch in by_error.values():
        for e in batch:
            if e.release:
                releases[e.project_id, e.release].append(e.timestamp)
            if e.environment:
                environments[e.project_id, e.environment].append(e.timestamp)
    seen.record(conn, _spans(releases), _spans(environments))


def _spans(times: Mapping[tuple[int, str], list[float]]) -> dict[tuple[int, str], seen.Span]:
    return {key: (min(t), max(t)) for key, t in times.items()}


def _states(conn: Connection, ids: list[int]) -> list[dict[str, Any]]:
    query = _states_query(conn.dialect.name)
    return [dict(r._mapping) for r in conn.execute(query, {"ids": ids})]


@lru_cache(maxsize=2)
def _states_query(dialect: str) -> Select[Any]:
    # Only resolved and ignored errors can change here (rows locked by update_errors on
    # PostgreSQL; on SQLite no other writer runs).
    # In id order, the order their activity entries get (SQLite walks the ids in that
    # order anyway: no sort).
    return (
        select(*_STATE_COLUMNS)
        .where(in_ids(dialect, errors.c.id), errors.c.status != "unresolved")
        .order_by(errors.c.id)
    )


def _reopen_regressions(
    conn: Connection,
    states: list[dict[str, Any]],
    by_error: Mapping[int, Sequence[DigestedEvent]],
    now: float,
    outcome: WorkflowOutcome,
) -> None:
    resolved = [s for s in states if s["status"] == "resolved"]
    by_project: dict[int, set[str]] = defaultdict(set)
    for s in resolved:
        versions = {e.release for e in by_error[s["id"]] if e.release}
        by_project[s["project_id"]].update(versions | {s["resolved_release"]} - {None})
    first_seen = {p: seen.release_first_seen(conn, p, v) for p, v in by_project.items()}
    for s in resolved:
        state = rules.Resolved(
            s["resolution"] or rules.NOW, s["resolved_release"], float(s["resolved_at"] or 0.0)
        )
        for e in by_error[s["id"]]:  # the first event of the batch that reopens it
            order = first_seen.get(s["project_id"], {})
            if rules.regresses(state, release=e.release, timestamp=e.timestamp, first_seen=order):
                _reopen(conn, s, now, regressed=True)
                activity.add(
                    conn,
                    s["project_id"],
                    [s["id"]],
                    "set_regression",
                    user_id=None,
                    now=now,
                    data={"event_id": e.event_id, "release": e.release},
                )
                outcome.regressed[s["id"]] = e.event_id
                break


def _unignore(
    conn: Connection, states: list[dict[str, Any]], now: float, outcome: WorkflowOutcome
) -> None:
    for s in states:
        if s["id"] in outcome.unignored:
            continue
        state = rules.Ignored(
            until=s["ignore_until"],
            count=s["ignore_count"],
            events_base=int(s["ignore_events_base"] or 0),
            user_count=s["ignore_user_count"],
            users_base=int(s["ignore_users_base"] or 0),
        )
        passed = rules.ignore_passed(
            state, now=now, events=int(s["events_count"]), users=int(s["users_count"])
        )
        if passed is None:
            continue
        _reopen(conn, s, now, regressed=False)
        activity.add(
            conn,
            s["project_id"],
            [s["id"]],
            "set_unresolved",
            user_id=None,
            now=now,
            data={"reason": f"ignore_{passed}"},
        )
        outcome.unignored[s["id"]] = passed
        outcome.projects[s["id"]] = s["project_id"]


def _reopen(conn: Connection, state: dict[str, Any], now: float, *, regressed: bool) -> None:
    values = {**CLEARED_CONDITIONS, "status": "unresolved", "inbox_at": now}
    if regressed:
        values["regressed"] = True
    conn.execute(errors.update().where(errors.c.id == state["id"]).values(**values))


def _expired(conn: Connection, now: float) -> list[dict[str, Any]]:
    """Ignored errors whose "ignore until" moment passed, events or not (ix_errors_ignore_until)."""
    return [dict(r._mapping) for r in conn.execute(_EXPIRED, {"now": now})]


# Built once, as the statements above: it runs every batch.
_EXPIRED = (
    select(*_STATE_COLUMNS)
    .where(errors.c.ignore_until <= bindparam("now"), errors.c.status == "ignored")
    .order_by(errors.c.ignore_until)
    .limit(EXPIRED_PER_BATCH)
)


def _new_for_review(conn: Connection, new: list[int]) -> None:
    """A new error goes "for review" from its first event on."""
    if new:
        conn.execute(_for_review_update(conn.dialect.name), {"ids": new})


@lru_cache(maxsize=2)
def _for_review_update(dialect: str) -> Update:
    return errors.update().where(in_ids(dialect, errors.c.id)).values(inbox_at=errors.c.first_seen)
