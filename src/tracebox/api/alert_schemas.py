"""Request and response bodies of alert rules, actions, deliveries and notification
settings (``/projects/:id/error_tracking/alert_rules`` and friends)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from tracebox.alerts.message import delivery_title
from tracebox.api.timefmt import iso, iso_or_none
from tracebox.store.alert_outbox import Delivery
from tracebox.store.alerts import (
    NOTIFICATION_KINDS,
    AlertAction,
    AlertRule,
    RuleSpec,
    Trigger,
    UserNotificationSettings,
)

NO_NUL = r"^[^\x00]*$"
Text255 = Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=NO_NUL)]
Text200 = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=NO_NUL)]
ChannelName = Literal["email", "webhook", "slack", "discord", "teams"]
Level = Literal["fatal", "error", "warning", "info", "debug"]
Kind = Literal["new_error", "regression", "surge", "unignored", "release_health", "assigned"]
DeliveryStatus = Literal["pending", "sending", "sent", "retrying", "failed"]


class ActionIn(BaseModel):
    channel: ChannelName
    # email: addresses separated by spaces or commas, empty for the project's members
    # (by their notification settings); other channels: the receiver's URL
    target: Annotated[str, Field(max_length=2048, pattern=NO_NUL)] = ""
    # webhook: the signing secret (16 to 200 characters); omitted: one is generated and
    # returned once
    secret: Annotated[str | None, Field(min_length=16, max_length=200, pattern=NO_NUL)] = None


class ActionUpdate(BaseModel):
    target: Annotated[str, Field(max_length=2048, pattern=NO_NUL)]
    secret: Annotated[str | None, Field(min_length=16, max_length=200, pattern=NO_NUL)] = None
    rotate_secret: bool = False  # webhook: generate a new secret (returned once)


class ActionOut(BaseModel):
    id: int
    rule_id: int
    channel: ChannelName
    target: str  # email: the addresses; others: the URL's scheme and host only
    created_at: str
    secret: str | None = None  # a webhook's new secret, in the answer that created it

    @classmethod
    def of(cls, a: AlertAction, secret: str | None = None) -> ActionOut:
        return cls(
            id=a.id,
            rule_id=a.rule_id,
            channel=a.channel.value,
            target=a.target_display,
            created_at=iso(a.created_at),
            secret=secret,
        )


class RuleFields(BaseModel):
    """Every field is optional in an update; ``name`` and ``trigger`` are required to
    create. Filters left out (null) match everything."""

    name: Text255 | None = None
    trigger: Trigger | None = None
    enabled: bool | None = None
    threshold: Annotated[int | None, Field(ge=1, le=10**9)] = None
    threshold_kind: Literal["events", "users"] | None = None
    window_minutes: Annotated[int | None, Field(ge=1, le=1440)] = None
    compare_factor: Annotated[float | None, Field(gt=1, le=1000)] = None
    crash_free_below: Annotated[float | None, Field(gt=0, le=100)] = None
    environment: Text255 | None = None
    min_level: Level | None = None
    tag_key: Text200 | None = None
    tag_value: Text200 | None = None
    release: Text255 | None = None
    cooldown_minutes: Annotated[int | None, Field(ge=1, le=10080)] = None


class RuleIn(RuleFields):
    name: Text255
    trigger: Trigger
    actions: Annotated[list[ActionIn], Field(max_length=10)] = []


class RuleOut(BaseModel):
    id: int
    project_id: int
    name: str
    trigger: Trigger
    enabled: bool
    threshold: int | None
    threshold_kind: str | None
    window_minutes: int | None
    compare_factor: float | None
    crash_free_below: float | None
    environment: str | None
    min_level: str | None
    tag_key: str | None
    tag_value: str | None
    release: str | None
    cooldown_minutes: int
    created_at: str
    updated_at: str
    actions: list[ActionOut]

    @classmethod
    def of(cls, r: AlertRule, actions: list[ActionOut]) -> RuleOut:
        fields = {k: getattr(r, k) for k in RuleSpec.__dataclass_fields__}
        return cls(
            id=r.id,
            project_id=r.project_id,
            created_at=iso(r.created_at),
            updated_at=iso(r.updated_at),
            actions=actions,
            **fields,
        )


class TestAnswer(BaseModel):
    """The receiver's answer to a test notification."""

    ok: bool
    status: int | None
    body: str
    error: str | None


class DeliveryOut(BaseModel):
    id: int
    kind: str  # the trigger, "storm", "assigned"
    rule_id: int | None
    error_id: int | None
    action_id: int | None
    channel: str
    recipient: str
    status: DeliveryStatus
    attempts: int
    idempotency_key: str
    title: str | None
    last_error: str | None
    response_status: int | None
    response_body: str | None
    created_at: str
    updated_at: str
    next_attempt_at: str | None
    sent_at: str | None

    @classmethod
    def of(cls, d: Delivery) -> DeliveryOut:
        waiting = d.status in ("pending", "retrying")
        return cls(
            id=d.id,
            kind=d.kind,
            rule_id=d.rule_id,
            error_id=d.error_id,
            action_id=d.action_id,
            channel=d.channel,
            recipient=d.recipient,
            status=d.status,  # type: ignore[arg-type]
            attempts=d.attempts,
            idempotency_key=d.idempotency_key,
            title=delivery_title(d.payload, d.kind),
            last_error=d.last_error,
            response_status=d.response_status,
            response_body=d.response_excerpt,
            created_at=iso(d.created_at),
            updated_at=iso(d.updated_at),
            next_attempt_at=iso(d.next_attempt_at) if waiting else None,
            sent_at=iso_or_none(d.sent_at),
        )


class NotificationSettingsIO(BaseModel):
    """Your email notifications for this project. ``triggers``: which kinds email you."""

    email: bool
    triggers: Annotated[list[Kind], Field(max_length=len(NOTIFICATION_KINDS))]
    custom: bool = False  # false: your role's default (on for Maintainers and Owners)

    @classmethod
    def of(cls, s: UserNotificationSettings) -> NotificationSettingsIO:
        kinds = [k for k in NOTIFICATION_KINDS if k in s.kinds]
        return cls(email=s.email, triggers=kinds, custom=s.custom)  # type: ignore[arg-type]
