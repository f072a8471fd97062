"""Alert rules, their actions, deliveries and your notification settings (issue 14):
``/projects/:id/error_tracking/alert_rules``, ``.../alert_deliveries`` and
``.../notification_settings``. Every member sees rules; Maintainer+ change them and
send test notifications; Reporter+ read the delivery log; Maintainer+ retry."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response
from sqlalchemy import Connection

from tracebox.accounts.policy import Action
from tracebox.accounts.projects import ProjectAccess
from tracebox.alerts import rules
from tracebox.alerts.deliver import SendContext
from tracebox.api.alert_schemas import (
    ActionIn,
    ActionOut,
    ActionUpdate,
    DeliveryOut,
    DeliveryStatus,
    NotificationSettingsIO,
    RuleFields,
    RuleIn,
    RuleOut,
    TestAnswer,
)
from tracebox.api.context import (
    ApiContext,
    Ctx,
    CurrentPrincipal,
    ErrorsReader,
    IdPath,
    TrackingAdmin,
    project_for,
)
from tracebox.api.pagination import CursorParam, PerPage, keyset_headers
from tracebox.errors import InvalidParameter, NotFound
from tracebox.store import alert_outbox
from tracebox.store import alerts as store
from tracebox.store.alerts import AlertAction, AlertRule, Channel, RuleSpec

router = APIRouter(tags=["alerts"])
RULES = "/projects/{id}/error_tracking/alert_rules"
RULE = RULES + "/{rule_id}"
ACTIONS = RULE + "/actions"
ACTION = ACTIONS + "/{action_id}"
DELIVERIES = "/projects/{id}/error_tracking/alert_deliveries"
NOTIFICATIONS = "/projects/{id}/error_tracking/notification_settings"
RulesReader = Annotated[ProjectAccess, Depends(project_for(Action.READ_ALERT_RULES))]


def _send_context(ctx: ApiContext) -> SendContext:
    return SendContext.from_settings(ctx.settings)


def _rule(conn: Connection, project_id: int, rule_id: int) -> AlertRule:
    rule = store.get_rule(conn, project_id, rule_id)
    if rule is None:
        raise NotFound("Alert Rule")
    return rule


def _action(conn: Connection, rule: AlertRule, action_id: int) -> AlertAction:
    action = store.get_action(conn, rule.project_id, rule.id, action_id)
    if action is None:
        raise NotFound("Alert Action")
    return action


def _out(conn: Connection, rule: AlertRule) -> RuleOut:
    actions = store.actions_of(conn, [rule.id])[rule.id]
    return RuleOut.of(rule, [ActionOut.of(a) for a in actions])


@router.get(RULES, response_model=list[RuleOut])
def list_rules(access: RulesReader, ctx: Ctx) -> list[RuleOut]:
    """The project's alert rules with their actions (every member)."""
    with ctx.db.read() as conn:
        return [_out(conn, r) for r in store.list_rules(conn, access.project.id)]


@router.post(RULES, response_model=RuleOut, status_code=201)
def create_rule(body: RuleIn, access: TrackingAdmin, ctx: Ctx) -> RuleOut:
    """Create a rule, with its actions if given (Maintainer+). A webhook action's
    secret is returned once, in this answer."""
    limits, send_ctx = rules.Limits.from_settings(ctx.settings), _send_context(ctx)
    spec = RuleSpec(**body.model_dump(exclude={"actions"}, exclude_none=True))
    targets = [
        (
            Channel(a.channel),
            rules.prepare_target(send_ctx, Channel(a.channel), a.target, limits, secret=a.secret),
        )
        for a in body.actions
    ]
    with ctx.db.write() as conn:
        rule = rules.create_rule(conn, access.project.id, spec, limits)
        created = [
            ActionOut.of(rules.add_action(conn, send_ctx, rule, ch, t, limits), t.secret)
            for ch, t in targets
        ]
    return RuleOut.of(rule, created)


@router.get(RULE, response_model=RuleOut)
def get_rule(rule_id: IdPath, access: RulesReader, ctx: Ctx) -> RuleOut:
    with ctx.db.read() as conn:
        return _out(conn, _rule(conn, access.project.id, rule_id))


@router.put(RULE, response_model=RuleOut)
def update_rule(rule_id: IdPath, body: RuleFields, access: TrackingAdmin, ctx: Ctx) -> RuleOut:
    """Change the fields given (Maintainer+); ``null`` clears a filter."""
    changes = body.model_dump(exclude_unset=True)
    for required in ("name", "trigger", "enabled", "cooldown_minutes"):
        if required in changes and changes[required] is None:
            raise InvalidParameter(f"{required} is invalid")
    with ctx.db.write() as conn:
        rule = rules.update_rule(conn, _rule(conn, access.project.id, rule_id), changes)
        return _out(conn, rule)


@router.delete(RULE, status_code=204, response_class=Response)
def delete_rule(rule_id: IdPath, access: TrackingAdmin, ctx: Ctx) -> Response:
    with ctx.db.write() as conn:
        if not store.delete_rule(conn, access.project.id, rule_id):
            raise NotFound("Alert Rule")
    return Response(status_code=204)


@router.post(ACTIONS, response_model=ActionOut, status_code=201)
def add_action(rule_id: IdPath, body: ActionIn, access: TrackingAdmin, ctx: Ctx) -> ActionOut:
    """Add an action (Maintainer+). Webhook and chat URLs must pass the outbound rules."""
    limits, send_ctx = rules.Limits.from_settings(ctx.settings), _send_context(ctx)
    channel = Channel(body.channel)
    target = rules.prepare_target(send_ctx, channel, body.target, limits, secret=body.secret)
    with ctx.db.write() as conn:
        rule = _rule(conn, access.project.id, rule_id)
        return ActionOut.of(
            rules.add_action(conn, send_ctx, rule, channel, target, limits), target.secret
        )


@router.put(ACTION, response_model=ActionOut)
def update_action(
    rule_id: IdPath, action_id: IdPath, body: ActionUpdate, access: TrackingAdmin, ctx: Ctx
) -> ActionOut:
    limits, send_ctx = rules.Limits.from_settings(ctx.settings), _send_context(ctx)
    with ctx.db.write() as conn:
        action = _action(conn, _rule(conn, access.project.id, rule_id), action_id)
        updated, secret = rules.update_action(
            conn,
            send_ctx,
            action,
            body.target,
            limits,
            secret=body.secret,
            rotate_secret=body.rotate_secret,
        )
    return ActionOut.of(updated, secret)


@router.delete(ACTION, status_code=204, response_class=Response)
def delete_action(rule_id: IdPath, action_id: IdPath, access: TrackingAdmin, ctx: Ctx) -> Response:
    with ctx.db.write() as conn:
        if not store.delete_action(conn, access.project.id, rule_id, action_id):
            raise NotFound("Alert Action")
    return Response(status_code=204)


@router.post(ACTION + "/test", response_model=TestAnswer)
def test_action(
    rule_id: IdPath, action_id: IdPath, access: TrackingAdmin, ctx: Ctx, principal: CurrentPrincipal
) -> TestAnswer:
    """Send a test notification now and return the receiver's answer (Maintainer+).
    A test email goes to the action's addresses, else to you."""
    with ctx.db.read() as conn:
        rule = _rule(conn, access.project.id, rule_id)
        action = _action(conn, rule, action_id)
    to = rules.email_recipients_for_test(action, principal.user.email)
    answer = rules.send_test(_send_context(ctx), access.project, rule, action, to)
    return TestAnswer(ok=answer.ok, status=answer.status, body=answer.body, error=answer.error)


StatusQuery = Annotated[DeliveryStatus | None, Query(description="Only deliveries in this state")]


@router.get(DELIVERIES, response_model=list[DeliveryOut])
def list_deliveries(
    request: Request,
    response: Response,
    access: ErrorsReader,
    ctx: Ctx,
    status: StatusQuery = None,
    cursor: CursorParam = None,
    per_page: PerPage = 20,
) -> list[DeliveryOut]:
    """The delivery log, newest first (Reporter+): what was sent, when, and failures."""
    before = _cursor(cursor)
    with ctx.db.read() as conn:
        found = alert_outbox.list_deliveries(
            conn, access.project.id, status=status, before=before, limit=per_page + 1
        )
    page = found[:per_page]
    next_c = f"{page[-1].created_at!r}_{page[-1].id}" if len(found) > per_page else None
    keyset_headers(request, response, per_page, next_c, None)
    return [DeliveryOut.of(d) for d in page]


def _cursor(text: str | None) -> tuple[float, int] | None:
    if text is None:
        return None
    try:
        at, _, last = text.partition("_")
        return float(at), int(last)
    except ValueError as e:
        raise InvalidParameter("cursor is invalid") from e


@router.get(DELIVERIES + "/{delivery_id}", response_model=DeliveryOut)
def get_delivery(delivery_id: IdPath, access: ErrorsReader, ctx: Ctx) -> DeliveryOut:
    with ctx.db.read() as conn:
        found = alert_outbox.get_delivery(conn, access.project.id, delivery_id)
    if found is None:
        raise NotFound("Alert Delivery")
    return DeliveryOut.of(found)


@router.post(DELIVERIES + "/{delivery_id}/retry", response_model=DeliveryOut)
def retry_delivery(delivery_id: IdPath, access: TrackingAdmin, ctx: Ctx) -> DeliveryOut:
    """Retry a failed or retrying delivery now, with a fresh retry period (Maintainer+).
    404 for a delivery that was sent or is being sent."""
    period = ctx.settings.alert_retry_period_hours * 3600
    with ctx.db.write() as conn:
        if not alert_outbox.retry_now(
            conn, access.project.id, delivery_id, now=time.time(), period_s=period
        ):
            raise NotFound("Retryable Alert Delivery")
        found = alert_outbox.get_delivery(conn, access.project.id, delivery_id)
    assert found is not None
    return DeliveryOut.of(found)


@router.get(NOTIFICATIONS, response_model=NotificationSettingsIO)
def get_notification_settings(
    access: ErrorsReader, ctx: Ctx, principal: CurrentPrincipal
) -> NotificationSettingsIO:
    """Your email notifications for this project (Reporter+)."""
    with ctx.db.read() as conn:
        found = store.user_settings(conn, principal.user.id, access.project.id, access.level)
    return NotificationSettingsIO.of(found)


@router.put(NOTIFICATIONS, response_model=NotificationSettingsIO)
def put_notification_settings(
    body: NotificationSettingsIO, access: ErrorsReader, ctx: Ctx, principal: CurrentPrincipal
) -> NotificationSettingsIO:
    with ctx.db.write() as conn:
        store.put_user_settings(
            conn, principal.user.id, access.project.id, email=body.email, kinds=body.triggers
        )
        found = store.user_settings(conn, principal.user.id, access.project.id, access.level)
    return NotificationSettingsIO.of(found)
