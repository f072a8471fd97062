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
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import Connection

from tracebox.alerts.matching import is_later_release, matches, release_matches
from tracebox.alerts.model import AlertBatch, ErrorActivity, LazyBatch
from tracebox.alerts.outbox import OutboxWriter, cooldown_seconds
from tracebox.alerts.surge import SurgeCounter
from tracebox.config import Settings
from tracebox.store import alert_outbox
from tracebox.store.alerts import AlertRule, Trigger, enabled_rules

log = logging.getLogger("tracebox.alerts")


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
    conn: Connection,
    batch: AlertBatch | LazyBatch,
    policy: AlertPolicy,
    *,
    now: float | None = None,
) -> int:
    """Evaluate the rules of the batch's projects; return how many firings were written.
    A failure here is logged and rolled back to a savepoint: alerts must never cost an
    event its place in the database. A ``LazyBatch`` is built only for the projects that
    have rules."""
    projects = batch.project_ids
    if not projects:
        return 0
    try:
        rules = {p: r for p, r in enabled_rules(conn, projects).items() if r}
    except (ValueError, KeyError, TypeError):  # a rule row this version cannot read
        log.exception("alert rules could not be read; the batch's events are kept")
        return 0
    if not rules:
        return 0
    now = time.time() if now is None else now
    savepoint = conn.begin_nested()
    try:
        full = batch.build(set(rules)) if isinstance(batch, LazyBatch) else batch
        fired = _evaluate(conn, full, rules, policy, now)
    except Exception:
        savepoint.rollback()
        log.exception("alert rules could not be evaluated for a batch; its events are kept")
        return 0
    savepoint.commit()
    return fired


def _evaluate(
    conn: Connection,
    batch: AlertBatch,
    rules: dict[int, list[AlertRule]],
    policy: AlertPolicy,
    now: float,
) -> int:
    projects = set(rules)
    by_project: dict[int, list[ErrorActivity]] = defaultdict(list)
    for activity in batch.errors:
        by_project[activity.project_id].append(activity)
    writer = OutboxWriter(conn, policy, now)
    fired = 0
    for project_id in sorted(projects):
        project_rules = rules.get(project_id, [])
        activities = by_project.get(project_id, [])
        surge_rules = [r for r in project_rules if r.trigger == Trigger.SURGE]
        surges = SurgeCounter(conn, activities, surge_rules, now) if surge_rules else None
        releases = batch.session_releases.get(project_id, frozenset())
        for rule in project_rules:
            if rule.trigger == Trigger.SURGE and surges is not None:
                firings = surges.firings(rule, policy, cooldown_seconds(rule))
            else:
                firings = _firings(conn, rule, activities, releases, policy, now)
            if firings:
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
    if rule.trigger == Trigger.RELEASE_HEALTH:
        return _release_health(conn, rule, releases, policy, now)
    return []  # SURGE: SurgeCounter; UNIGNORED: hooks.ignored_condition_passed


def _error_firing(a: ErrorActivity, **details: object) -> Firing:
    return Firing(f"error:{a.error_id}", a, dict(details), weight=a.events)


def _is_regression(rule: AlertRule, a: ErrorActivity) -> bool:
    if not a.regressed or not matches(rule, a.event):
        return False
    return is_later_release(a.event.release, a.resolved_in_release)


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
