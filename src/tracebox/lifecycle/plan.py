"""What a cleanup pass would remove, counted without removing anything
(``tracebox cleanup --dry-run``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from tracebox.config import Settings
from tracebox.lifecycle.retention import DAY, Policy, policies
from tracebox.store import Database, deletion, projects, retention, sqlite_space, usage


@dataclass(frozen=True)
class ProjectPlan:
    project: str
    max_age_days: int
    max_events_per_error: int
    events: int  # stored now
    by_age: int  # older than max_age_days
    by_count: int  # of the rest, beyond each error's first and latest N


@dataclass(frozen=True)
class Plan:
    projects: list[ProjectPlan]
    used_bytes: int
    budget_bytes: int  # 0: no budget
    over_budget_bytes: int  # the oldest data removed until under the budget
    pending_deletions: int


def plan(db: Database, settings: Settings, clock: Callable[[], float] = time.time) -> Plan:
    found = [_project(db, p, policy, clock()) for p, policy in policies(db, settings).items()]
    with db.read() as conn:
        used = sqlite_space.space(conn).used_bytes
        pending = len(deletion.pending(conn, limit=10_000))
    budget = settings.max_data_bytes
    return Plan(found, used, budget, max(0, used - budget) if budget else 0, pending)


def _project(db: Database, project_id: int, policy: Policy, now: float) -> ProjectPlan:
    before = now - policy.max_age_days * DAY
    keep = policy.max_events_per_error
    with db.read() as conn:
        found = projects.get(conn, project_id)
        stored = usage.stored(conn, project_id).get(usage.EVENTS)
        by_age = retention.count_project_events_before(conn, project_id, before)
        by_count = 0
        after = 0
        while errors := retention.errors_with_more_than(
            conn, project_id, keep + 1, after_id=after, limit=500
        ):
            for error_id in errors:
                total = retention.count_events_before(conn, error_id, float("inf"))
                left = total - retention.count_events_before(conn, error_id, before)
                by_count += max(0, left - keep - 1)
            after = errors[-1]
    return ProjectPlan(
        project=found.path if found else str(project_id),
        max_age_days=policy.max_age_days,
        max_events_per_error=keep,
        events=stored.items if stored else 0,
        by_age=by_age,
        by_count=by_count,
    )
