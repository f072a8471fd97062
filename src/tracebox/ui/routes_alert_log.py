"""Project > Monitor > Alerts: the delivery log with "Retry now" (Reporter+ read,
Maintainer+ retry) and your own email notification settings (Reporter+)."""

from __future__ import annotations

import time
from collections.abc import Callable

from starlette.responses import Response
from starlette.routing import Route

from tracebox.accounts.policy import Action
from tracebox.alerts.message import delivery_title
from tracebox.errors import NotFound
from tracebox.store import alert_outbox
from tracebox.store import alerts as store
from tracebox.store.alert_outbox import STATUSES
from tracebox.store.alerts import NOTIFICATION_KINDS
from tracebox.ui.links import project_url
from tracebox.ui.web import Req

PER_PAGE = 50
KIND_LABELS = {
    "new_error": "New errors",
    "regression": "Regressions",
    "surge": "Surges",
    "unignored": "Ignored errors passing their condition",
    "release_health": "Release health",
    "assigned": "Errors assigned to me",
}


def routes(page: Callable[..., Route], base: str) -> list[Route]:
    log = base + "/deliveries"
    return [
        page(log, deliveries),
        page(log + "/{delivery_id:int}/retry", retry, ["POST"]),
        page(base + "/notifications", notifications),
        page(base + "/notifications", save_notifications, ["POST"]),
    ]


def deliveries(r: Req, project: str) -> Response:
    access = r.project(project, Action.READ_ERRORS)
    status = r.query("status")
    status = status if status in STATUSES else ""
    before = _cursor(r.query("before"))
    with r.db.read() as conn:
        found = alert_outbox.list_deliveries(
            conn, access.project.id, status=status or None, before=before, limit=PER_PAGE + 1
        )
        counts = alert_outbox.status_counts(conn, access.project.id)
        rules = {x.id: x for x in store.list_rules(conn, access.project.id)}
    page = found[:PER_PAGE]
    more = f"{page[-1].created_at!r}_{page[-1].id}" if len(found) > PER_PAGE else None
    return r.render(
        "alerts/deliveries.html",
        access=access,
        deliveries=page,
        rules=rules,
        current=status,
        statuses=STATUSES,
        counts=counts,
        more=more,
        retry_hours=r.ctx.settings.alert_retry_period_hours,
        title=delivery_title,
    )


def _cursor(text: str) -> tuple[float, int] | None:
    at, _, last = text.partition("_")
    try:
        return (float(at), int(last)) if text else None
    except ValueError:
        return None


def retry(r: Req, project: str, delivery_id: int) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    period = r.ctx.settings.alert_retry_period_hours * 3600
    with r.db.write() as conn:
        if not alert_outbox.retry_now(
            conn, access.project.id, delivery_id, now=time.time(), period_s=period
        ):
            raise NotFound("Retryable Alert Delivery")
    r.flash("notice", f"Delivery {delivery_id} will be retried now.")
    return r.redirect(project_url(access.project.path, "alerts/deliveries"))


def notifications(r: Req, project: str) -> Response:
    access = r.project(project, Action.READ_ERRORS)
    with r.db.read() as conn:
        found = store.user_settings(conn, r.principal.user.id, access.project.id, access.level)
    return r.render(
        "alerts/notifications.html",
        access=access,
        settings=found,
        kinds=NOTIFICATION_KINDS,
        labels=KIND_LABELS,
        email=r.principal.user.email,
    )


def save_notifications(r: Req, project: str) -> Response:
    access = r.project(project, Action.READ_ERRORS)
    kinds = [k for k in r.form.all("kinds") if k in NOTIFICATION_KINDS]
    with r.db.write() as conn:
        store.put_user_settings(
            conn, r.principal.user.id, access.project.id, email=r.form.checked("email"), kinds=kinds
        )
    r.flash("notice", "Your notification settings have been saved.")
    return r.redirect(project_url(access.project.path, "alerts/notifications"))
