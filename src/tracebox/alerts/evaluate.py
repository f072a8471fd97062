"""Decide, inside the digest's transaction, which rules fire, and write the outbox.

Contract 8: a trigger is decided in the transaction that stores the event, so a crash
neither loses nor doubles it; cooldowns are atomic upserts, so N nodes agree. The cost
when no rule applies is one indexed query per batch (the rules of its projects).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import Connection

from tracebox.alerts.matching import is_later_release, matches, release_matches
from tracebox.alerts.model import AlertBatch, ErrorActivity
from tracebox.alerts.outbox import OutboxWriter, cooldown_seconds
from tracebox.config import Settings
from tracebox.store import alert_outbox
from tracebox.store.alerts import AlertRule, Trigger, enabled_rules

log = logging.getLogger("tracebox.alerts")

DAY_MINUTES = 24 * 60
USERS_RECHECK_SECONDS = 10.0  # a users-surge below its threshold is counted again after this


@dataclass
class AlertPolicy:
    """The instance's alert settings the digest needs, plus small per-process throttles
    (a cache, never the source of truth: several nodes need not share them)."""

    storm_threshold: int = 10
    storm_window_s: float = 300.0
    storm_quiet_s: float = 60.0
    retry_period_s: float = 24 * 3600.0
    release_health_interval_s: float = 60.0
    _next_check: dict[tuple[object, ...], float] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def from_settings(cls, s: Settings) -> AlertPolicy:
        return cls(
            storm_threshold=s.alert_storm_threshold,
            storm_window_s=s.alert_storm_window_seconds,
            storm_quiet_s=s.alert_storm_quiet_seconds,
            retry_period_s=s.alert_retry_period_hours * 3600,
            release_health_interval_s=s.alert_release_health_interval_seconds,
        )

    def due(self, key: tuple[object, ...], now: float, interval: float) -> bool:
        """True at most once per ``interval`` per key (and always when interval <= 0)."""
        with self._lock:
            if len(self._next_check) > 10_000:
                self._next_check = {k: t for k, t in self._next_check.items() if t > now}
            if self._next_check.get(key, 0.0) > now:
                return False
            self._next_check[key] = now + interval
            return True


@dataclass(frozen=True)
class Firing:
    """One rule firing for one subject (an error or a release)."""

    subject: str
    activity: ErrorActivity | None
    details: dict[str, object] = field(default_factory=dict)
    weight: int = 1  # ordering within a storm: the busiest first


def evaluate(
    conn: Connection, batch: AlertBatch, policy: AlertPolicy, *, now: float | None = None
) -> int:
    """Evaluate the rules of the batch's projects; return how many firings were written.
    A failure here is logged and rolled back to a savepoint: alerts must never cost an
    event its place in the database."""
    projects = batch.project_ids
    if not projects:
        return 0
    now = time.time() if now is None else now
    savepoint = conn.begin_nested()
    try:
        fired = _evaluate(conn, batch, projects, policy, now)
    except Exception:
        savepoint.rollback()
        log.exception("alert rules could not be evaluated for a batch; its events are kept")
        return 0
    savepoint.commit()
    return fired


def _evaluate(
    conn: Connection, batch: AlertBatch, projects: set[int], policy: AlertPolicy, now: float
) -> int:
    rules = enabled_rules(conn, projects)
    if not any(rules.values()):
        return 0
    by_project: dict[int, list[ErrorActivity]] = defaultdict(list)
    for activity in batch.errors:
        by_project[activity.project_id].append(activity)
    writer = OutboxWriter(conn, policy, now)
    fired = 0
    for project_id in sorted(projects):
        project_rules = rules.get(project_id, [])
        activities = by_project.get(project_id, [])
        if any(r.trigger == Trigger.SURGE for r in project_rules):
            _count_minutes(conn, activities)
        releases = batch.session_releases.get(project_id, frozenset())
        for rule in project_rules:
            firings = _firings(conn, rule, activities, releases, policy, now)
            fired += writer.fire(rule, firings)
    return fired


def _firings(
    conn: Connection,
    rule: AlertRule,
    activities: Sequence[ErrorActivity],
    releases: frozenset[str],
    policy: AlertPolicy,
    now: float,
) -> list[Firing]:
    if rule.trigger == Trigger.NEW_ERROR:
        found = [a for a in activities if a.created and matches(rule, a.event)]
        return [_error_firing(a) for a in found]
    if rule.trigger == Trigger.REGRESSION:
        return [_error_firing(a) for a in activities if _is_regression(rule, a)]
    if rule.trigger == Trigger.SURGE:
        return _surges(conn, rule, [a for a in activities if matches(rule, a.event)], policy, now)
    if rule.trigger == Trigger.RELEASE_HEALTH:
        return _release_health(conn, rule, releases, policy, now)
    return []  # UNIGNORED fires through hooks.ignored_condition_passed


def _error_firing(a: ErrorActivity, **details: object) -> Firing:
    return Firing(f"error:{a.error_id}", a, dict(details), weight=a.events)


def _is_regression(rule: AlertRule, a: ErrorActivity) -> bool:
    if not a.regressed or not matches(rule, a.event):
        return False
    return is_later_release(a.event.release, a.resolved_in_release)


def _count_minutes(conn: Connection, activities: Iterable[ErrorActivity]) -> None:
    counts = {(a.error_id, m): n for a in activities for m, n in a.minutes.items()}
    alert_outbox.add_minute_counts(conn, counts)


def _surges(
    conn: Connection,
    rule: AlertRule,
    activities: Sequence[ErrorActivity],
    policy: AlertPolicy,
    now: float,
) -> list[Firing]:
    """Errors over the rule's threshold in the last ``window_minutes`` (and, optionally,
    ``compare_factor`` times the same window a day earlier)."""
    threshold, window = rule.threshold or 1, rule.window_minutes or 60
    last = int(now // 60)
    first = last - window + 1
    ids = [a.error_id for a in activities]
    current = alert_outbox.minute_totals(conn, ids, first, last)
    candidates = [a for a in activities if current.get(a.error_id, 0) >= threshold]
    if not candidates:
        return []
    cooling = {
        a.error_id
        for a in candidates
        if alert_outbox.in_cooldown(
            conn, rule.id, f"error:{a.error_id}", now - cooldown_seconds(rule)
        )
    }
    candidates = [a for a in candidates if a.error_id not in cooling]
    earlier: dict[int, int] = {}
    if rule.compare_factor and candidates:
        earlier = alert_outbox.minute_totals(
            conn, [a.error_id for a in candidates], first - DAY_MINUTES, last - DAY_MINUTES
        )
    found = []
    for a in candidates:
        count = current[a.error_id]
        if rule.compare_factor and count < rule.compare_factor * max(earlier.get(a.error_id, 0), 1):
            continue
        details: dict[str, object] = {
            "events": count,
            "window_minutes": window,
            "threshold": threshold,
            "kind": rule.threshold_kind or "events",
        }
        if rule.compare_factor:
            details["day_earlier"] = earlier.get(a.error_id, 0)
        if rule.threshold_kind == "users":
            if not policy.due(("users", rule.id, a.error_id), now, USERS_RECHECK_SECONDS):
                continue
            users = alert_outbox.users_since(conn, a.error_id, first * 60)
            if users < threshold:
                continue
            details["users"] = users
        found.append(Firing(f"error:{a.error_id}", a, details, weight=count))
    return found


def _release_health(
    conn: Connection, rule: AlertRule, releases: frozenset[str], policy: AlertPolicy, now: float
) -> list[Firing]:
    """Releases whose crash-free sessions rate fell below the rule's percentage after at
    least ``threshold`` sessions. Fires once per release; re-arms when it recovers."""
    found = []
    for release in sorted(releases):
        if rule.release and not release_matches(rule.release, release):
            continue
        key = ("release", rule.id, release)
        if not policy.due(key, now, policy.release_health_interval_s):
            continue
        total, crashed = alert_outbox.session_counts(
            conn, rule.project_id, release, rule.environment
        )
        if total < (rule.threshold or 1):
            continue
        rate = 100.0 * (1 - crashed / total)
        subject = f"release:{release}"
        if rate >= (rule.crash_free_below or 0):
            alert_outbox.rearm(conn, rule.id, subject)
            continue
        details: dict[str, object] = {
            "release": release,
            "environment": rule.environment,
            "sessions": total,
            "crashed": crashed,
            "crash_free_rate": round(rate, 2),
            "below": rule.crash_free_below,
        }
        found.append(Firing(subject, None, details))
    return found
