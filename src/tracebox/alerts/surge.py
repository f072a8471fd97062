"""Surge detection without a counter of its own: the digest's hourly counts bound how
many events an error can have had in a window (every event of the window falls in one
of the hours it overlaps), and only errors whose bound reaches a rule's threshold are
counted exactly, from the events index (``ix_events_error_time``). Most errors of a
batch are far below any threshold and cost one shared read per batch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy import Connection

from tracebox.alerts.matching import matches
from tracebox.alerts.model import ErrorActivity
from tracebox.store import alert_outbox
from tracebox.store.alerts import AlertRule

if TYPE_CHECKING:
    from tracebox.alerts.evaluate import AlertPolicy, Firing

DAY_S = 86400.0
USERS_RECHECK_SECONDS = 10.0  # a users-surge below its threshold is counted again after this


class SurgeCounter:
    """The surge rules of one project over one batch's errors."""

    def __init__(
        self,
        conn: Connection,
        activities: Sequence[ErrorActivity],
        rules: Sequence[AlertRule],
        now: float,
    ) -> None:
        self.conn, self.now = conn, now
        longest = max((r.window_minutes or 60) for r in rules) * 60
        lowest = min((r.threshold or 1) for r in rules)
        ids = [a.error_id for a in activities]
        first_hour = int((now - longest) // 3600)
        self.hourly = alert_outbox.busy_errors(conn, ids, first_hour, lowest)
        self.busy = [a for a in activities if a.error_id in self.hourly]

    def upper_bound(self, error_id: int, since: float) -> int:
        """At least the error's events since ``since``."""
        first = int(since // 3600)
        return sum(n for hour, n in self.hourly[error_id].items() if hour >= first)

    def firings(self, rule: AlertRule, policy: AlertPolicy, cooldown_s: float) -> list[Firing]:
        """Errors with at least ``threshold`` events (or users) in the last
        ``window_minutes`` and, with ``compare_factor``, that many times the events of
        the same window a day earlier."""
        from tracebox.alerts.evaluate import Firing

        threshold, window = rule.threshold or 1, rule.window_minutes or 60
        since = self.now - window * 60
        found = []
        for a in self.busy:
            if self.upper_bound(a.error_id, since) < threshold or not matches(rule, a.event):
                continue
            subject = f"error:{a.error_id}"
            if alert_outbox.in_cooldown(self.conn, rule.id, subject, self.now - cooldown_s):
                continue
            count = alert_outbox.events_between(self.conn, a.error_id, since, None)
            details = self._details(rule, a, count, since, policy) if count >= threshold else None
            if details is not None:
                found.append(Firing(subject, a, details, weight=count))
        return found

    def _details(
        self, rule: AlertRule, a: ErrorActivity, count: int, since: float, policy: AlertPolicy
    ) -> dict[str, object] | None:
        threshold = rule.threshold or 1
        details: dict[str, object] = {
            "events": count,
            "window_minutes": rule.window_minutes or 60,
            "threshold": threshold,
            "kind": rule.threshold_kind or "events",
        }
        if rule.compare_factor:
            earlier = alert_outbox.events_between(
                self.conn, a.error_id, since - DAY_S, self.now - DAY_S
            )
            if count < rule.compare_factor * max(earlier, 1):
                return None
            details["day_earlier"] = earlier
        if rule.threshold_kind == "users":
            if not policy.due(("users", rule.id, a.error_id), self.now, USERS_RECHECK_SECONDS):
                return None
            users = alert_outbox.users_since(self.conn, a.error_id, since)
            if users < threshold:
                return None
            details["users"] = users
        return details
