"""Managing rules and actions (the API, the UI and the CLI call these): validation,
limits, encrypted targets, webhook secrets and test notifications."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace

from sqlalchemy import Connection

from tracebox.accounts.users import EMAIL_PATTERN
from tracebox.alerts.channels import webhook
from tracebox.alerts.deliver import SendContext, send
from tracebox.alerts.message import Message, project_url
from tracebox.alerts.outbound import Answer, check, display
from tracebox.config import Settings
from tracebox.errors import BadRequest, InvalidParameter
from tracebox.models import Project
from tracebox.protocol.levels import LEVELS
from tracebox.store import alerts as store
from tracebox.store.alerts import AlertAction, AlertRule, Channel, RuleSpec, Trigger

MAX_COOLDOWN_MINUTES = 7 * 24 * 60  # a week
MAX_WINDOW_MINUTES = 24 * 60  # a surge window of up to a day
MAX_THRESHOLD = 10**9
MAX_FACTOR = 1000.0
THRESHOLD_KINDS = ("events", "users")


@dataclass(frozen=True)
class Limits:
    max_rules: int = 100
    max_actions: int = 10
    max_recipients: int = 20

    @classmethod
    def from_settings(cls, s: Settings) -> Limits:
        return cls(
            s.alert_max_rules_per_project,
            s.alert_max_actions_per_rule,
            s.alert_max_email_recipients,
        )


def validate(spec: RuleSpec) -> RuleSpec:
    """A rule that makes sense, or ``InvalidParameter`` naming the field."""
    name = spec.name.strip()
    if not name or len(name) > 255 or "\x00" in name:
        raise InvalidParameter("name is invalid")
    _optional_text(spec)
    if spec.min_level is not None and spec.min_level not in LEVELS:
        raise InvalidParameter(f"min_level must be one of {', '.join(LEVELS)}")
    if spec.tag_value is not None and spec.tag_key is None:
        raise InvalidParameter("tag_key is missing (tag_value needs it)")
    if not 1 <= spec.cooldown_minutes <= MAX_COOLDOWN_MINUTES:
        raise InvalidParameter(f"cooldown_minutes must be 1 to {MAX_COOLDOWN_MINUTES}")
    spec = replace(spec, name=name)
    if spec.trigger == Trigger.SURGE:
        return _surge(spec)
    if spec.trigger == Trigger.RELEASE_HEALTH:
        return _release_health(spec)
    return replace(
        spec, threshold=None, threshold_kind=None, window_minutes=None, compare_factor=None
    )


def _optional_text(spec: RuleSpec) -> None:
    limits = {"environment": 255, "release": 255, "tag_key": 200, "tag_value": 200}
    for field, limit in limits.items():
        value = getattr(spec, field)
        if value is not None and (not value or len(value) > limit or "\x00" in value):
            raise InvalidParameter(f"{field} is invalid (1 to {limit} characters)")


def _surge(spec: RuleSpec) -> RuleSpec:
    if spec.threshold is None or not 1 <= spec.threshold <= MAX_THRESHOLD:
        raise InvalidParameter("threshold is missing or invalid (a surge needs N >= 1)")
    kind = spec.threshold_kind or "events"
    if kind not in THRESHOLD_KINDS:
        raise InvalidParameter("threshold_kind must be events or users")
    window = spec.window_minutes or 60
    if not 1 <= window <= MAX_WINDOW_MINUTES:
        raise InvalidParameter(f"window_minutes must be 1 to {MAX_WINDOW_MINUTES}")
    factor = spec.compare_factor
    if factor is not None and not 1 < factor <= MAX_FACTOR:
        raise InvalidParameter(f"compare_factor must be more than 1 and at most {MAX_FACTOR:g}")
    return replace(
        spec,
        threshold_kind=kind,
        window_minutes=window,
        crash_free_below=None,
        release=spec.release,
    )


def _release_health(spec: RuleSpec) -> RuleSpec:
    below = spec.crash_free_below
    if below is None or not 0 < below <= 100:
        raise InvalidParameter("crash_free_below is missing or invalid (a percentage)")
    sessions = spec.threshold or 100
    if not 1 <= sessions <= MAX_THRESHOLD:
        raise InvalidParameter("threshold is invalid (the minimum number of sessions)")
    return replace(
        spec,
        threshold=sessions,
        threshold_kind=None,
        window_minutes=None,
        compare_factor=None,
        min_level=None,
        tag_key=None,
        tag_value=None,
    )


def create_rule(conn: Connection, project_id: int, spec: RuleSpec, limits: Limits) -> AlertRule:
    if store.count_rules(conn, project_id) >= limits.max_rules:
        raise InvalidParameter(f"rules are limited to {limits.max_rules} per project")
    return store.create_rule(conn, project_id, validate(spec))


@dataclass(frozen=True)
class NewTarget:
    target: str  # stored: addresses, or the encrypted URL
    display: str
    encrypted_secret: str | None
    secret: str | None  # a new webhook secret, shown once


def prepare_target(
    ctx: SendContext,
    channel: Channel,
    target: str,
    limits: Limits,
    *,
    secret: str | None = None,
    keep_secret: str | None = None,
) -> NewTarget:
    """Check and encrypt what the user entered. Email: addresses, or empty for the
    project's members. Others: a URL that passes the outbound rules now (and again at
    every send)."""
    target = target.strip()
    if channel == Channel.EMAIL:
        addresses = [a for a in re.split(r"[\s,;]+", target) if a]
        if len(addresses) > limits.max_recipients:
            raise InvalidParameter(f"target has more than {limits.max_recipients} addresses")
        bad = [a for a in addresses if not EMAIL_PATTERN.fullmatch(a)]
        if bad:
            raise InvalidParameter(f"target is not an email address: {bad[0][:100]}")
        listed = ", ".join(addresses) if addresses else "project members"
        return NewTarget(" ".join(addresses), listed[:255], None, None)
    if not target:
        raise InvalidParameter("target is missing (the receiver's URL)")
    check(target, ctx.outbound)
    encrypted_secret: str | None = None
    shown: str | None = None
    if channel == Channel.WEBHOOK:
        if secret is not None and not 16 <= len(secret) <= 200:
            raise InvalidParameter("secret must be 16 to 200 characters")
        if secret is None and keep_secret is not None:
            encrypted_secret = keep_secret
        else:
            shown = secret or webhook.new_secret()
            encrypted_secret = ctx.cipher.encrypt(shown)
    return NewTarget(ctx.cipher.encrypt(target), display(target), encrypted_secret, shown)


def add_action(
    conn: Connection,
    ctx: SendContext,
    rule: AlertRule,
    channel: Channel,
    target: NewTarget,
    limits: Limits,
) -> AlertAction:
    if len(store.actions_of(conn, [rule.id])[rule.id]) >= limits.max_actions:
        raise InvalidParameter(f"actions are limited to {limits.max_actions} per rule")
    return store.add_action(
        conn,
        rule,
        channel,
        target=target.target,
        target_display=target.display,
        encrypted_secret=target.encrypted_secret,
    )


def test_message(base: str, project: Project, rule: AlertRule) -> Message:
    path = project.path
    return Message(
        kind="test",
        headline=f"Test notification in {path}",
        title=f"Alert rule {rule.name!r} can reach this receiver",
        text="This is a test notification from Tracebox: the action works.",
        url=project_url(base, path, f"alerts/{rule.id}"),
        project={
            "id": project.id,
            "path": path,
            "name": project.name,
            "url": project_url(base, path, "error_tracking"),
        },
        settings_url=project_url(base, path, "alerts/notifications"),
        rule={"id": rule.id, "name": rule.name, "trigger": rule.trigger.value},
        facts=[("Rule", rule.name), ("Trigger", rule.trigger.value)],
        details={"test": True},
    )


def send_test(
    ctx: SendContext,
    project: Project,
    rule: AlertRule,
    action: AlertAction,
    recipients: list[str],
) -> Answer:
    """Send a test notification now and return the receiver's answer. Email goes to
    ``recipients`` (the action's addresses, or the person asking)."""
    message = test_message(ctx.base_url, project, rule)
    key = f"test{int(time.time() * 1000):x}"
    if action.channel == Channel.EMAIL:
        if not recipients:
            raise BadRequest("No recipient: the action has no address and you have no email")
        answers = [
            send(ctx, action.channel, message, action=action, recipient=r, key=key, now=time.time())
            for r in recipients
        ]
        return next((a for a in answers if not a.ok), answers[0])
    return send(ctx, action.channel, message, action=action, recipient="", key=key, now=time.time())


def update_rule(conn: Connection, rule: AlertRule, changes: dict[str, object]) -> AlertRule:
    """Change the fields given (validated as a whole rule)."""
    spec = validate(replace(rule.spec, **changes))  # type: ignore[arg-type]
    store.update_rule(conn, rule.project_id, rule.id, spec)
    updated = store.get_rule(conn, rule.project_id, rule.id)
    assert updated is not None
    return updated


def update_action(
    conn: Connection,
    ctx: SendContext,
    action: AlertAction,
    target: str,
    limits: Limits,
    *,
    secret: str | None = None,
    rotate_secret: bool = False,
) -> tuple[AlertAction, str | None]:
    """A new target (and, for a webhook, a new or the same secret)."""
    keep = None if rotate_secret else action.encrypted_secret
    new = prepare_target(ctx, action.channel, target, limits, secret=secret, keep_secret=keep)
    store.update_action(
        conn, action, target=new.target, display=new.display, secret=new.encrypted_secret
    )
    found = store.get_action(conn, action.project_id, action.rule_id, action.id)
    assert found is not None
    return found, new.secret


def email_recipients_for_test(action: AlertAction, fallback: str | None) -> list[str]:
    """A test email goes to the action's addresses, else to the person who asked."""
    return action.target.split() or ([fallback] if fallback else [])
