"""Turn a rule's firings into outbox rows: cooldown first, then one notification per
firing, or, past the storm threshold, one digest notification folding the rest."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from tracebox.models import Project
from tracebox.store import alert_outbox, projects
from tracebox.store.alert_outbox import STORM, NewDelivery
from tracebox.store.alerts import (
    AlertAction,
    AlertRule,
    Channel,
    Recipient,
    Trigger,
    actions_of,
    email_recipients,
    lock_rule,
)

if TYPE_CHECKING:
    from tracebox.alerts.evaluate import AlertPolicy, Firing

MAX_STORM_ITEMS = 100  # errors listed in a storm digest's stored payload


class OutboxWriter:
    """Writes firings for one batch; caches what several firings share."""

    def __init__(self, conn: Connection, policy: AlertPolicy, now: float) -> None:
        self.conn, self.policy, self.now = conn, policy, now
        self._actions: dict[int, list[AlertAction]] = {}
        self._projects: dict[int, Project | None] = {}
        self._recipients: dict[tuple[int, str], list[Recipient]] = {}

    def fire(self, rule: AlertRule, firings: Sequence[Firing]) -> int:
        """Write the firings not in cooldown; return how many fired."""
        if not firings:
            return 0
        fired = alert_outbox.fire_cooldowns(
            self.conn,
            rule.id,
            [f.subject for f in firings],
            now=self.now,
            cooldown_s=cooldown_seconds(rule),
        )
        due = sorted((f for f in firings if f.subject in fired), key=lambda f: -f.weight)
        actions = self._actions_of(rule)
        if not due or not actions:
            return len(due)
        lock_rule(self.conn, rule.id)
        since = self.now - self.policy.storm_window_s
        recent = alert_outbox.notifications_since(self.conn, rule.id, since)
        room = max(0, self.policy.storm_threshold - recent)
        for firing in due[:room]:
            self._notify(rule, firing, actions)
        if due[room:]:
            self._fold(rule, due[room:], actions, recent + min(room, len(due)))
        return len(due)

    def _notify(self, rule: AlertRule, firing: Firing, actions: Sequence[AlertAction]) -> None:
        payload = self.payload(rule.project_id, rule, firing)
        error_id = firing.activity.error_id if firing.activity else None
        nid = alert_outbox.add_notification(
            self.conn,
            project_id=rule.project_id,
            rule_id=rule.id,
            kind=rule.trigger.value,
            error_id=error_id,
            payload=payload,
            now=self.now,
        )
        receivers = self.receivers(rule.project_id, actions, rule.trigger.value)
        self._deliver(rule.project_id, nid, receivers, due=self.now)

    def _fold(
        self,
        rule: AlertRule,
        firings: Sequence[Firing],
        actions: Sequence[AlertAction],
        individual: int,
    ) -> None:
        """Add firings to the rule's open storm digest, or open one."""
        storm = alert_outbox.open_storm(self.conn, rule.id)
        payload = storm.payload if storm else self._storm_payload(rule, individual)
        items = {item["id"]: item for item in payload["errors"]}
        for f in firings:
            if f.activity is None:
                continue
            item = items.setdefault(f.activity.error_id, _storm_item(f))
            item["events"] = max(int(item["events"]), f.weight)
        ranked = sorted(items.values(), key=lambda i: (-int(i["events"]), int(i["id"])))
        payload["errors"] = ranked[:MAX_STORM_ITEMS]
        folded = (storm.folded if storm else 0) + len(firings)
        payload["folded"] = folded
        first_at = float(payload["first_at"])
        due = min(first_at + self.policy.storm_window_s, self.now + self.policy.storm_quiet_s)
        if storm is not None:
            alert_outbox.update_storm(self.conn, storm, payload, folded, due)
            return
        nid = alert_outbox.add_notification(
            self.conn,
            project_id=rule.project_id,
            rule_id=rule.id,
            kind=STORM,
            error_id=None,
            payload=payload,
            now=self.now,
            folded=folded,
        )
        receivers = self.receivers(rule.project_id, actions, rule.trigger.value)
        self._deliver(rule.project_id, nid, receivers, due=due)

    def _storm_payload(self, rule: AlertRule, individual: int) -> dict[str, Any]:
        return {
            **self._header(rule.project_id, rule),
            "first_at": self.now,
            "window_seconds": self.policy.storm_window_s,
            "individual": individual,
            "errors": [],
        }

    def payload(self, project_id: int, rule: AlertRule | None, firing: Firing) -> dict[str, Any]:
        """The notification's snapshot (the sender adds current counts when it sends)."""
        body = self._header(project_id, rule)
        a = firing.activity
        if a is not None:
            e = a.event
            body["error"] = {"id": a.error_id, "title": e.title, "culprit": e.culprit}
            body["event"] = {
                "id": e.event_id,
                "timestamp": e.timestamp,
                "level": e.level,
                "environment": e.environment,
                "release": e.release,
            }
        body["details"] = firing.details
        return body

    def _header(self, project_id: int, rule: AlertRule | None) -> dict[str, Any]:
        project = self._project(project_id)
        return {
            "project": {
                "id": project_id,
                "path": project.path if project else "",
                "name": project.name if project else "",
            },
            "rule": {"id": rule.id, "name": rule.name, "trigger": rule.trigger.value}
            if rule
            else None,
        }

    def receivers(
        self, project_id: int, actions: Sequence[AlertAction], kind: str
    ) -> list[NewDelivery]:
        found = []
        for action in actions:
            if action.channel != Channel.EMAIL:
                found.append(NewDelivery(action.channel.value, action.target_display, action.id))
                continue
            addresses = action.target.split()
            if addresses:
                found += [NewDelivery("email", a, action.id) for a in addresses]
                continue
            for r in self._members(project_id, kind):
                found.append(NewDelivery("email", r.email, action.id, r.user_id))
        return found

    def _deliver(
        self, project_id: int, nid: int, receivers: Sequence[NewDelivery], *, due: float
    ) -> None:
        alert_outbox.add_deliveries(
            self.conn,
            project_id,
            nid,
            receivers,
            now=self.now,
            due=due,
            retry_period_s=self.policy.retry_period_s,
        )

    def notify_user(self, project_id: int, kind: str, firing: Firing, recipient: Recipient) -> None:
        """A personal notification (no rule): one email to one member."""
        nid = alert_outbox.add_notification(
            self.conn,
            project_id=project_id,
            rule_id=None,
            kind=kind,
            error_id=firing.activity.error_id if firing.activity else None,
            payload=self.payload(project_id, None, firing),
            now=self.now,
        )
        delivery = NewDelivery("email", recipient.email, None, recipient.user_id)
        self._deliver(project_id, nid, [delivery], due=self.now)

    def _actions_of(self, rule: AlertRule) -> list[AlertAction]:
        if rule.id not in self._actions:
            self._actions[rule.id] = actions_of(self.conn, [rule.id])[rule.id]
        return self._actions[rule.id]

    def _project(self, project_id: int) -> Project | None:
        if project_id not in self._projects:
            self._projects[project_id] = projects.get(self.conn, project_id)
        return self._projects[project_id]

    def _members(self, project_id: int, kind: str) -> list[Recipient]:
        key = (project_id, kind)
        if key not in self._recipients:
            self._recipients[key] = email_recipients(self.conn, project_id, kind)
        return self._recipients[key]


def _storm_item(f: Firing) -> dict[str, Any]:
    a = f.activity
    assert a is not None
    e = a.event
    return {"id": a.error_id, "title": e.title, "culprit": e.culprit, "level": e.level, "events": 0}


def cooldown_seconds(rule: AlertRule) -> float:
    """Seconds a rule stays quiet for a subject after firing. A new error is new once;
    release health fires once until the release recovers."""
    if rule.trigger in (Trigger.NEW_ERROR, Trigger.RELEASE_HEALTH):
        return math.inf
    return rule.cooldown_minutes * 60.0
