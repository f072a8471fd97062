"""Alert rules, their actions, and people's email notification settings (issue 14)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from sqlalchemy import Connection, Row, bindparam, func, select

from tracebox.models import AccessLevel
from tracebox.store.dialect import insert
from tracebox.store.tables import alert_actions, alert_rules, alert_user_settings, users
from tracebox.store.tables import project_members as pm


class Trigger(StrEnum):
    NEW_ERROR = "new_error"  # the first event of a new error
    REGRESSION = "regression"  # an event for a resolved error
    SURGE = "surge"  # more than N events or users for one error in M minutes
    UNIGNORED = "unignored"  # an ignored error whose "ignore until" condition passed
    RELEASE_HEALTH = "release_health"  # crash-free sessions below X% after N sessions


class Channel(StrEnum):
    EMAIL = "email"
    WEBHOOK = "webhook"
    SLACK = "slack"  # also Mattermost and Rocket.Chat (Slack-compatible incoming webhooks)
    DISCORD = "discord"
    TEAMS = "teams"  # a Microsoft Teams workflow ("Post to a channel when a webhook ...")


ASSIGNED = "assigned"  # a personal notification, not a rule's trigger
NOTIFICATION_KINDS = (*(t.value for t in Trigger), ASSIGNED)
# Members of these roles get email by default (issue 14: Maintainers and Owners).
EMAIL_DEFAULT_LEVEL = AccessLevel.MAINTAINER
# Emails describe errors: only members who may read errors receive them (Reporter+).
EMAIL_MIN_LEVEL = AccessLevel.REPORTER


@dataclass(frozen=True)
class RuleSpec:
    """The editable fields of a rule (validated by ``alerts.rules``)."""

    name: str
    trigger: Trigger
    enabled: bool = True
    threshold: int | None = None
    threshold_kind: str | None = None
    window_minutes: int | None = None
    compare_factor: float | None = None
    crash_free_below: float | None = None
    environment: str | None = None
    min_level: str | None = None
    tag_key: str | None = None
    tag_value: str | None = None
    release: str | None = None
    cooldown_minutes: int = 30


@dataclass(frozen=True)
class AlertRule(RuleSpec):
    id: int = 0
    project_id: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0

    @property
    def spec(self) -> RuleSpec:
        fields = {k: v for k, v in asdict(self).items() if k in RuleSpec.__dataclass_fields__}
        return RuleSpec(**fields)


@dataclass(frozen=True)
class AlertAction:
    id: int
    rule_id: int
    project_id: int
    channel: Channel
    target: str  # email: addresses ("" = members); others: the encrypted URL
    target_display: str
    encrypted_secret: str | None
    created_at: float

    def __repr__(self) -> str:  # the target may be an encrypted credential
        return f"AlertAction({self.id}, {self.channel.value}, {self.target_display!r})"


@dataclass(frozen=True)
class UserNotificationSettings:
    user_id: int
    project_id: int
    email: bool
    kinds: frozenset[str]
    custom: bool  # False: the role's default (no row stored)


@dataclass(frozen=True)
class Recipient:
    user_id: int
    email: str


SPEC_COLUMNS = tuple(RuleSpec.__dataclass_fields__)


def _rule(row: Row[Any]) -> AlertRule:
    m = dict(row._mapping)
    m["trigger"] = Trigger(m["trigger"])
    return AlertRule(**m)


def _action(row: Row[Any]) -> AlertAction:
    m = dict(row._mapping)
    m["channel"] = Channel(m["channel"])
    return AlertAction(**m)


def _spec_values(spec: RuleSpec) -> dict[str, Any]:
    values = asdict(spec)
    values["trigger"] = spec.trigger.value
    return values


def create_rule(conn: Connection, project_id: int, spec: RuleSpec) -> AlertRule:
    now = time.time()
    values = {**_spec_values(spec), "project_id": project_id, "created_at": now, "updated_at": now}
    rule_id = conn.execute(alert_rules.insert().values(**values)).inserted_primary_key
    assert rule_id is not None
    found = get_rule(conn, project_id, int(rule_id[0]))
    assert found is not None
    return found


def update_rule(conn: Connection, project_id: int, rule_id: int, spec: RuleSpec) -> bool:
    t = alert_rules
    done = conn.execute(
        t.update()
        .where(t.c.id == rule_id, t.c.project_id == project_id)
        .values(**_spec_values(spec), updated_at=time.time())
    )
    return done.rowcount > 0


def delete_rule(conn: Connection, project_id: int, rule_id: int) -> bool:
    t = alert_rules
    done = conn.execute(t.delete().where(t.c.id == rule_id, t.c.project_id == project_id))
    return done.rowcount > 0


def get_rule(conn: Connection, project_id: int, rule_id: int) -> AlertRule | None:
    t = alert_rules
    row = conn.execute(select(t).where(t.c.id == rule_id, t.c.project_id == project_id)).first()
    return _rule(row) if row else None


def list_rules(conn: Connection, project_id: int) -> list[AlertRule]:
    t = alert_rules
    query = select(t).where(t.c.project_id == project_id).order_by(t.c.id)
    return [_rule(r) for r in conn.execute(query)]


def count_rules(conn: Connection, project_id: int) -> int:
    t = alert_rules
    query = select(func.count()).select_from(t).where(t.c.project_id == project_id)
    return int(conn.execute(query).scalar_one())


# Built once (the digest runs it every batch): ix_alert_rules_project.
_ENABLED_RULES = (
    select(alert_rules)
    .where(
        alert_rules.c.project_id.in_(bindparam("ids", expanding=True)),
        alert_rules.c.enabled.is_(True),
    )
    .order_by(alert_rules.c.id)
)


def enabled_rules(conn: Connection, project_ids: Iterable[int]) -> dict[int, list[AlertRule]]:
    """The enabled rules of these projects, by project (the digest's per-batch load)."""
    ids = sorted(set(project_ids))
    found: dict[int, list[AlertRule]] = {p: [] for p in ids}
    if not ids:
        return found
    for row in conn.execute(_ENABLED_RULES, {"ids": ids}):
        rule = _rule(row)
        found[rule.project_id].append(rule)
    return found


def lock_rule(conn: Connection, rule_id: int) -> None:
    """Serialise firing of one rule across nodes (PostgreSQL; SQLite has one writer)."""
    if conn.dialect.name == "postgresql":
        conn.execute(select(alert_rules.c.id).where(alert_rules.c.id == rule_id).with_for_update())


def add_action(
    conn: Connection,
    rule: AlertRule,
    channel: Channel,
    *,
    target: str,
    target_display: str,
    encrypted_secret: str | None,
) -> AlertAction:
    values = {
        "rule_id": rule.id,
        "project_id": rule.project_id,
        "channel": channel.value,
        "target": target,
        "target_display": target_display,
        "encrypted_secret": encrypted_secret,
        "created_at": time.time(),
    }
    key = conn.execute(alert_actions.insert().values(**values)).inserted_primary_key
    assert key is not None
    found = get_action(conn, rule.project_id, rule.id, int(key[0]))
    assert found is not None
    return found


def update_action(
    conn: Connection, action: AlertAction, *, target: str, display: str, secret: str | None
) -> None:
    t = alert_actions
    conn.execute(
        t.update()
        .where(t.c.id == action.id)
        .values(target=target, target_display=display, encrypted_secret=secret)
    )


def get_action(
    conn: Connection, project_id: int, rule_id: int, action_id: int
) -> AlertAction | None:
    t = alert_actions
    query = select(t).where(
        t.c.id == action_id, t.c.rule_id == rule_id, t.c.project_id == project_id
    )
    row = conn.execute(query).first()
    return _action(row) if row else None


def get_action_by_id(conn: Connection, action_id: int) -> AlertAction | None:
    row = conn.execute(select(alert_actions).where(alert_actions.c.id == action_id)).first()
    return _action(row) if row else None


def delete_action(conn: Connection, project_id: int, rule_id: int, action_id: int) -> bool:
    t = alert_actions
    done = conn.execute(
        t.delete().where(t.c.id == action_id, t.c.rule_id == rule_id, t.c.project_id == project_id)
    )
    return done.rowcount > 0


def actions_of(conn: Connection, rule_ids: Sequence[int]) -> dict[int, list[AlertAction]]:
    found: dict[int, list[AlertAction]] = {r: [] for r in rule_ids}
    if not rule_ids:
        return found
    t = alert_actions
    query = select(t).where(t.c.rule_id.in_(list(rule_ids))).order_by(t.c.id)
    for row in conn.execute(query):
        action = _action(row)
        found[action.rule_id].append(action)
    return found


# --- people ---------------------------------------------------------------------------


def default_settings(user_id: int, project_id: int, level: AccessLevel) -> UserNotificationSettings:
    on = level >= EMAIL_DEFAULT_LEVEL
    return UserNotificationSettings(user_id, project_id, on, frozenset(NOTIFICATION_KINDS), False)


def user_settings(
    conn: Connection, user_id: int, project_id: int, level: AccessLevel
) -> UserNotificationSettings:
    t = alert_user_settings
    row = conn.execute(
        select(t.c.email, t.c.triggers).where(t.c.user_id == user_id, t.c.project_id == project_id)
    ).first()
    if row is None:
        return default_settings(user_id, project_id, level)
    kinds = frozenset(k for k in row.triggers.split() if k in NOTIFICATION_KINDS)
    return UserNotificationSettings(user_id, project_id, bool(row.email), kinds, True)


def put_user_settings(
    conn: Connection, user_id: int, project_id: int, *, email: bool, kinds: Iterable[str]
) -> None:
    t = alert_user_settings
    values = {
        "user_id": user_id,
        "project_id": project_id,
        "email": email,
        "triggers": " ".join(sorted(set(kinds))),
        "updated_at": time.time(),
    }
    stmt = insert(conn, t)
    stmt = stmt.on_conflict_do_update(
        index_elements=["user_id", "project_id"],
        set_={k: stmt.excluded[k] for k in ("email", "triggers", "updated_at")},
    )
    conn.execute(stmt, values)


def email_recipients(conn: Connection, project_id: int, kind: str) -> list[Recipient]:
    """Members (Reporter+, not blocked) whose settings, or role default, want this email."""
    s = alert_user_settings
    query = (
        select(users.c.id, users.c.email, pm.c.access_level, s.c.email.label("on"), s.c.triggers)
        .select_from(
            pm.join(users, users.c.id == pm.c.user_id).outerjoin(
                s, (s.c.user_id == pm.c.user_id) & (s.c.project_id == pm.c.project_id)
            )
        )
        .where(
            pm.c.project_id == project_id,
            pm.c.access_level >= int(EMAIL_MIN_LEVEL),
            users.c.is_blocked.is_(False),
        )
        .order_by(users.c.id)
    )
    found = []
    for row in conn.execute(query):
        if row.on is None:
            wanted = row.access_level >= int(EMAIL_DEFAULT_LEVEL)
        else:
            wanted = bool(row.on) and kind in row.triggers.split()
        if wanted:
            found.append(Recipient(row.id, row.email))
    return found
