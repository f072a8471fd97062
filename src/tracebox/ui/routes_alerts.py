"""Project > Monitor > Alerts: the rules page, the rule form with its actions and their
"Send test notification" buttons (every member sees rules; Maintainer+ change them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from starlette.responses import Response
from starlette.routing import Route

from tracebox.accounts.policy import Action
from tracebox.accounts.projects import ProjectAccess
from tracebox.alerts import rules
from tracebox.alerts.deliver import SendContext
from tracebox.alerts.outbound import Answer
from tracebox.errors import BadRequest, InvalidParameter, NotFound
from tracebox.protocol.levels import LEVELS
from tracebox.store import alerts as store
from tracebox.store.alerts import AlertAction, AlertRule, Channel, RuleSpec, Trigger
from tracebox.ui import routes_alert_log
from tracebox.ui.forms import Form
from tracebox.ui.links import project_url
from tracebox.ui.web import Req, sentence

TRIGGERS = {
    Trigger.NEW_ERROR: "A new error is seen",
    Trigger.REGRESSION: "A resolved error happens again (regression)",
    Trigger.SURGE: "An error surges (more than N events or users in M minutes)",
    Trigger.UNIGNORED: "An ignored error passes its ignore condition",
    Trigger.RELEASE_HEALTH: "A release's crash-free sessions fall below a rate",
}
CHANNELS = {
    Channel.EMAIL: "Email",
    Channel.WEBHOOK: "Webhook (signed JSON)",
    Channel.SLACK: "Slack, Mattermost or Rocket.Chat",
    Channel.DISCORD: "Discord",
    Channel.TEAMS: "Microsoft Teams workflow",
}


@dataclass
class TestResult:
    action_id: int
    answer: Answer


def routes(page: Callable[..., Route], prefix: str) -> list[Route]:
    """The alert pages under ``prefix`` (``/{project:path}/-``)."""
    base = prefix + "/alerts"
    rule = base + "/{rule_id:int}"
    action = rule + "/actions/{action_id:int}"
    return [
        page(base, index),
        page(base + "/new", new_form),
        page(base + "/new", create, ["POST"]),
        page(rule, show),
        page(rule, save, ["POST"]),
        page(rule + "/delete", delete, ["POST"]),
        page(rule + "/actions", add_action, ["POST"]),
        page(action + "/delete", delete_action, ["POST"]),
        page(action + "/test", test_action, ["POST"]),
        *routes_alert_log.routes(page, base),
    ]


def _url(access: ProjectAccess, suffix: str = "") -> str:
    return project_url(access.project.path, "alerts" + suffix)


def index(r: Req, project: str) -> Response:
    access = r.project(project, Action.READ_ALERT_RULES)
    with r.db.read() as conn:
        found = store.list_rules(conn, access.project.id)
        actions = store.actions_of(conn, [x.id for x in found])
    return r.render(
        "alerts/rules.html", access=access, rules=found, actions=actions, triggers=TRIGGERS
    )


def new_form(r: Req, project: str) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    return _form(r, access, None, RuleSpec(name="", trigger=Trigger.NEW_ERROR))


def _form(
    r: Req,
    access: ProjectAccess,
    rule: AlertRule | None,
    spec: RuleSpec,
    *,
    status: int = 200,
    error: str | None = None,
    test: TestResult | None = None,
    secret: str | None = None,
) -> Response:
    actions: list[AlertAction] = []
    if rule is not None:
        with r.db.read() as conn:
            actions = store.actions_of(conn, [rule.id])[rule.id]
    return r.render(
        "alerts/rule.html",
        status,
        access=access,
        rule=rule,
        spec=spec,
        actions=actions,
        triggers=TRIGGERS,
        channels=CHANNELS,
        levels=LEVELS,
        error=error,
        test=test,
        secret=secret,
        form=r.form,
    )


def create(r: Req, project: str) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    ctx = SendContext.from_settings(r.ctx.settings)
    limits = rules.Limits.from_settings(r.ctx.settings)
    try:
        spec = spec_from(r.form)
        channel = Channel(r.form.get("channel", "email"))
        target = rules.prepare_target(ctx, channel, r.form.text("target"), limits)
        with r.db.write() as conn:
            rule = rules.create_rule(conn, access.project.id, spec, limits)
            rules.add_action(conn, ctx, rule, channel, target, limits)
    except (BadRequest, ValueError) as e:
        spec = _spec_or_blank(r.form)
        return _form(r, access, None, spec, status=400, error=sentence(str(e)))
    _flash_secret(r, target.secret)
    r.flash("notice", f"Alert rule {rule.name} was created.")
    return r.redirect(_url(access, f"/{rule.id}"))


def show(r: Req, project: str, rule_id: int) -> Response:
    access = r.project(project, Action.READ_ALERT_RULES)
    rule = _rule(r, access, rule_id)
    return _form(r, access, rule, rule.spec)


def save(r: Req, project: str, rule_id: int) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    rule = _rule(r, access, rule_id)
    try:
        spec = rules.validate(spec_from(r.form))
        with r.db.write() as conn:
            store.update_rule(conn, access.project.id, rule.id, spec)
    except (BadRequest, ValueError) as e:
        return _form(r, access, rule, _spec_or_blank(r.form), status=400, error=sentence(str(e)))
    r.flash("notice", "Your changes have been saved.")
    return r.redirect(_url(access, f"/{rule.id}"))


def delete(r: Req, project: str, rule_id: int) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    rule = _rule(r, access, rule_id)
    with r.db.write() as conn:
        store.delete_rule(conn, access.project.id, rule.id)
    r.flash("notice", f"Alert rule {rule.name} was deleted.")
    return r.redirect(_url(access))


def add_action(r: Req, project: str, rule_id: int) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    rule = _rule(r, access, rule_id)
    ctx = SendContext.from_settings(r.ctx.settings)
    limits = rules.Limits.from_settings(r.ctx.settings)
    try:
        channel = Channel(r.form.get("channel", "email"))
        target = rules.prepare_target(ctx, channel, r.form.text("target"), limits)
        with r.db.write() as conn:
            rules.add_action(conn, ctx, rule, channel, target, limits)
    except (BadRequest, ValueError) as e:
        return _form(r, access, rule, rule.spec, status=400, error=sentence(str(e)))
    _flash_secret(r, target.secret)
    r.flash("notice", f"{CHANNELS[channel]} action was added.")
    return r.redirect(_url(access, f"/{rule.id}#actions"))


def delete_action(r: Req, project: str, rule_id: int, action_id: int) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    rule = _rule(r, access, rule_id)
    with r.db.write() as conn:
        if not store.delete_action(conn, access.project.id, rule.id, action_id):
            raise NotFound("Alert Action")
    r.flash("notice", "The action was removed.")
    return r.redirect(_url(access, f"/{rule.id}#actions"))


def test_action(r: Req, project: str, rule_id: int, action_id: int) -> Response:
    """Send a test notification and show the receiver's answer on the rule page."""
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    rule = _rule(r, access, rule_id)
    with r.db.read() as conn:
        action = store.get_action(conn, access.project.id, rule.id, action_id)
    if action is None:
        raise NotFound("Alert Action")
    ctx = SendContext.from_settings(r.ctx.settings)
    to = rules.email_recipients_for_test(action, r.principal.user.email)
    answer = rules.send_test(ctx, access.project, rule, action, to)
    return _form(r, access, rule, rule.spec, test=TestResult(action.id, answer))


def _rule(r: Req, access: ProjectAccess, rule_id: int) -> AlertRule:
    with r.db.read() as conn:
        rule = store.get_rule(conn, access.project.id, rule_id)
    if rule is None:
        raise NotFound("Alert Rule")
    return rule


def _flash_secret(r: Req, secret: str | None) -> None:
    if secret:
        r.flash(
            "warning",
            f"The webhook's signing secret is {secret} — copy it now: it is not shown again.",
        )


def spec_from(form: Form) -> RuleSpec:
    """A rule from the form's fields (numbers checked here, the rest by ``validate``)."""
    tag = form.text("tag")
    tag_key, _, tag_value = tag.partition("=")
    return RuleSpec(
        name=form.text("name"),
        trigger=Trigger(form.get("trigger", "new_error")),
        enabled=form.checked("enabled"),
        threshold=_int(form, "threshold"),
        threshold_kind=form.text("threshold_kind") or None,
        window_minutes=_int(form, "window_minutes"),
        compare_factor=_float(form, "compare_factor"),
        crash_free_below=_float(form, "crash_free_below"),
        environment=form.text("environment") or None,
        min_level=form.text("min_level") or None,
        tag_key=tag_key.strip() or None,
        tag_value=(tag_value.strip() or None) if "=" in tag else None,
        release=form.text("release") or None,
        cooldown_minutes=_int(form, "cooldown_minutes") or 30,
    )


def _spec_or_blank(form: Form) -> RuleSpec:
    try:
        return spec_from(form)
    except (BadRequest, ValueError):
        return RuleSpec(name=form.get("name"), trigger=Trigger.NEW_ERROR)


def _float(form: Form, name: str) -> float | None:
    text = form.text(name)
    if not text:
        return None
    try:
        return float(text)
    except ValueError as e:
        raise InvalidParameter(f"{name} must be a number") from e


def _int(form: Form, name: str) -> int | None:
    value = _float(form, name)
    if value is not None and not value.is_integer():
        raise InvalidParameter(f"{name} must be a whole number")
    return None if value is None else int(value)
