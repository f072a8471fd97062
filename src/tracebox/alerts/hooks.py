"""Hooks the workflow (issue 15) calls inside its own transactions.

- ``ignored_condition_passed``: an ignored error's "ignore until" condition passed; the
  project's ``unignored`` rules fire for it (filters and cooldowns apply).
- ``assigned``: an error was assigned to a member; they get an email unless their
  notification settings say otherwise (default on for everyone who may read errors).
"""

from __future__ import annotations

import time

from sqlalchemy import Connection

from tracebox.alerts.evaluate import AlertPolicy, Firing
from tracebox.alerts.matching import matches
from tracebox.alerts.model import ErrorActivity
from tracebox.alerts.outbox import OutboxWriter
from tracebox.models import AccessLevel
from tracebox.store import accounts, members
from tracebox.store.alerts import (
    ASSIGNED,
    EMAIL_MIN_LEVEL,
    Recipient,
    Trigger,
    UserNotificationSettings,
    enabled_rules,
    user_settings,
)


def ignored_condition_passed(
    conn: Connection, policy: AlertPolicy, activity: ErrorActivity, *, now: float | None = None
) -> int:
    """Fire the project's ``unignored`` rules for this error; return how many fired."""
    now = time.time() if now is None else now
    writer = OutboxWriter(conn, policy, now)
    fired = 0
    for rule in enabled_rules(conn, [activity.project_id])[activity.project_id]:
        if rule.trigger == Trigger.UNIGNORED and matches(rule, activity.event):
            firing = Firing(f"error:{activity.error_id}", activity, weight=activity.events)
            fired += writer.fire(rule, [firing])
    return fired


def assigned(
    conn: Connection,
    policy: AlertPolicy,
    activity: ErrorActivity,
    assignee_id: int,
    *,
    actor_id: int | None = None,
    now: float | None = None,
) -> bool:
    """Email the assignee (not when they assigned it to themselves); True if queued."""
    if actor_id == assignee_id:
        return False
    level = members.access_level(conn, activity.project_id, assignee_id)
    user = accounts.get(conn, assignee_id)
    if level is None or level < EMAIL_MIN_LEVEL or user is None or user.is_blocked:
        return False
    settings = _assignee_settings(conn, assignee_id, activity.project_id, level)
    if not settings.email or ASSIGNED not in settings.kinds:
        return False
    writer = OutboxWriter(conn, policy, time.time() if now is None else now)
    firing = Firing(f"error:{activity.error_id}", activity, {"assignee": user.username})
    writer.notify_user(activity.project_id, ASSIGNED, firing, Recipient(user.id, user.email))
    return True


def _assignee_settings(
    conn: Connection, user_id: int, project_id: int, level: AccessLevel
) -> UserNotificationSettings:
    """Being assigned is personal: on by default whatever the role (unlike rule emails)."""
    found = user_settings(conn, user_id, project_id, level)
    if found.custom:
        return found
    return UserNotificationSettings(user_id, project_id, True, found.kinds, False)
