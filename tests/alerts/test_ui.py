"""The alert pages: rules list, rule form with actions and the test button, delivery
log with "Retry now", my notifications; who sees and who may change what."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from starlette.testclient import TestClient

from tests.alerts.receivers import Receiver, http_receiver
from tests.ui.conftest import Ui
from tracebox.app import create_app
from tracebox.config import Settings
from tracebox.models import AccessLevel
from tracebox.store import Database, alert_outbox
from tracebox.store import alerts as alert_store


def follow(ui: Ui, r: httpx.Response) -> httpx.Response:
    assert r.status_code == 303, r.text
    return ui.client.get(r.headers["location"])


@pytest.fixture
def ui(settings: Settings, db: Database) -> Iterator[Ui]:
    with TestClient(create_app(settings)) as client:
        yield Ui(client, db, settings)


def test_a_maintainer_creates_a_rule_tests_its_action_and_sees_the_answer(ui: Ui) -> None:
    owner = ui.user("alice")
    project = ui.project("acme/web", owner)
    ui.sign_in(owner)
    assert "No alert rules yet" in ui.client.get("/acme/web/-/alerts").text
    with http_receiver(Receiver(default=(200, {}, b"hello from the receiver"))) as receiver:
        r = ui.post(
            "/acme/web/-/alerts/new",
            {  # follow below
                "name": "Checkout errors",
                "trigger": "new_error",
                "enabled": "1",
                "min_level": "error",
                "tag": "browser=Firefox",
                "cooldown_minutes": "30",
                "channel": "webhook",
                "target": receiver.url,
            },
            page="/acme/web/-/alerts/new",
        )
        r = follow(ui, r)
        assert "Alert rule Checkout errors was created." in r.text
        assert re.search(r"signing secret is whsec_\S+", r.text)
        [rule] = _rules(ui, project.id)
        assert (rule.min_level, rule.tag_key, rule.tag_value) == ("error", "browser", "Firefox")
        [action] = _actions(ui, rule.id)
        page = f"/acme/web/-/alerts/{rule.id}"
        r = ui.post(f"{page}/actions/{action.id}/test", {}, page=page)
        assert "Delivered" in r.text and "the receiver answered 200" in r.text
        assert "hello from the receiver" in r.text
    [request] = receiver.requests
    assert b'"kind":"test"' in request.body
    listing = ui.client.get("/acme/web/-/alerts").text
    assert "Checkout errors" in listing and "http://127.0.0.1" in listing


def test_a_local_url_is_refused_with_the_reason(ui: Ui) -> None:
    ui.settings.alert_allow_local_network = False
    owner = ui.user("alice")
    ui.project("acme/web", owner)
    ui.sign_in(owner)
    form = {"name": "x", "trigger": "new_error", "channel": "slack"}
    r = ui.post(
        "/acme/web/-/alerts/new",
        {**form, "target": "http://169.254.169.254/latest"},
        page="/acme/web/-/alerts/new",
    )
    assert r.status_code == 400
    assert "Requests to the local network are not allowed" in r.text


def test_members_see_rules_but_only_maintainers_change_them(ui: Ui) -> None:
    owner, guest, dev = ui.user("alice"), ui.user("gus"), ui.user("dev")
    project = ui.project("acme/web", owner)
    ui.member(project, guest, AccessLevel.GUEST)
    ui.member(project, dev, AccessLevel.DEVELOPER)
    with ui.db.write() as conn:
        rule = alert_store.create_rule(
            conn,
            project.id,
            alert_store.RuleSpec(name="Regressions", trigger=alert_store.Trigger.REGRESSION),
        )
    ui.sign_in(guest)
    page = ui.client.get(f"/acme/web/-/alerts/{rule.id}")
    assert page.status_code == 200 and "Regressions" in page.text
    assert "Save changes" not in page.text
    assert ui.client.get("/acme/web/-/alerts/deliveries").status_code == 403
    ui.sign_in(dev)
    r = ui.post(f"/acme/web/-/alerts/{rule.id}", {"name": "mine", "trigger": "new_error"})
    assert r.status_code == 403
    assert ui.client.get("/acme/web/-/alerts/deliveries").status_code == 200


def test_the_delivery_log_retries_a_failed_delivery(ui: Ui) -> None:
    owner = ui.user("alice")
    project = ui.project("acme/web", owner)
    with ui.db.write() as conn:
        nid = alert_outbox.add_notification(
            conn,
            project_id=project.id,
            rule_id=None,
            kind="new_error",
            error_id=None,
            payload={"project": {"id": project.id, "path": "acme/web", "name": "web"}},
            now=1.0,
        )
        delivery = alert_outbox.NewDelivery("email", "ops@example.com")
        alert_outbox.add_deliveries(
            conn, project.id, nid, [delivery], now=1, due=1, retry_period_s=1
        )
        [d] = alert_outbox.claim(conn, owner="t", now=2, limit=1, lease_s=5)
        alert_outbox.finish(conn, d.id, "t", status="failed", now=2, error="SMTP 550: no such user")
    ui.sign_in(owner)
    log = ui.client.get("/acme/web/-/alerts/deliveries?status=failed").text
    assert "SMTP 550: no such user" in log and "Retry now" in log
    r = ui.post(
        f"/acme/web/-/alerts/deliveries/{d.id}/retry", {}, page="/acme/web/-/alerts/deliveries"
    )
    r = follow(ui, r)
    assert f"Delivery {d.id} will be retried now." in r.text
    with ui.db.read() as conn:
        assert alert_outbox.get_delivery(conn, project.id, d.id).status == "retrying"  # type: ignore[union-attr]


def test_my_notifications_opt_out(ui: Ui) -> None:
    owner = ui.user("alice")
    project = ui.project("acme/web", owner)
    ui.sign_in(owner)
    page = ui.client.get("/acme/web/-/alerts/notifications").text
    assert "these are your role&#39;s defaults" in page or "role's defaults" in page
    ui.post(
        "/acme/web/-/alerts/notifications",
        {"kinds": "regression"},
        page="/acme/web/-/alerts/notifications",
    )
    with ui.db.read() as conn:
        found = alert_store.user_settings(conn, owner.id, project.id, AccessLevel.OWNER)
    assert (found.email, found.kinds, found.custom) == (False, frozenset({"regression"}), True)


def _rules(ui: Ui, project_id: int) -> list[alert_store.AlertRule]:
    with ui.db.read() as conn:
        return alert_store.list_rules(conn, project_id)


def _actions(ui: Ui, rule_id: int) -> list[alert_store.AlertAction]:
    with ui.db.read() as conn:
        return alert_store.actions_of(conn, [rule_id])[rule_id]
