"""The alerts REST API: rules with actions, validation, secrets shown once, test
notifications answered by a real receiver, the delivery log, limits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from tests.alerts.receivers import Receiver, http_receiver, verify_signature
from tests.api.conftest import Api
from tracebox.app import create_app
from tracebox.config import Settings
from tracebox.store import Database, alert_outbox

P = "/api/v4/projects/{}/error_tracking"


@pytest.fixture
def api(settings: Settings, db: Database) -> Iterator[Api]:
    with TestClient(create_app(settings)) as client:
        yield Api(client, db, settings)


@pytest.fixture
def owner(api: Api) -> tuple[int, str]:
    user = api.user("owner")
    project = api.project("acme/web", user)
    return project.id, api.token(user)


def test_a_rule_with_a_webhook_its_secret_once_and_a_test_the_receiver_verifies(
    api: Api, owner: tuple[int, str]
) -> None:
    project_id, token = owner
    base = P.format(project_id)
    with http_receiver(Receiver(default=(202, {}, b"accepted"))) as receiver:
        body = {
            "name": "Surges",
            "trigger": "surge",
            "threshold": 50,
            "window_minutes": 10,
            "environment": "production",
            "actions": [{"channel": "webhook", "target": receiver.url}],
        }
        created = api.call("POST", base + "/alert_rules", token, json=body)
        assert created.status_code == 201, created.text
        rule = created.json()
        assert (rule["threshold_kind"], rule["cooldown_minutes"], rule["enabled"]) == (
            "events",
            30,
            True,
        )
        [action] = rule["actions"]
        secret = action["secret"]
        assert secret.startswith("whsec_") and action["target"] == "http://127.0.0.1"
        shown = api.call("GET", f"{base}/alert_rules/{rule['id']}", token).json()
        assert shown["actions"][0]["secret"] is None  # never again
        tested = api.call(
            "POST", f"{base}/alert_rules/{rule['id']}/actions/{action['id']}/test", token
        )
        assert tested.json() == {"ok": True, "status": 202, "body": "accepted", "error": None}
        rotated = api.call(
            "PUT",
            f"{base}/alert_rules/{rule['id']}/actions/{action['id']}",
            token,
            json={"target": receiver.url, "rotate_secret": True},
        ).json()
        assert rotated["secret"] and rotated["secret"] != secret
        api.call("POST", f"{base}/alert_rules/{rule['id']}/actions/{action['id']}/test", token)
    first, second = receiver.requests
    assert verify_signature(secret, first.headers, first.body)
    assert verify_signature(rotated["secret"], second.headers, second.body)


def test_a_test_to_an_unreachable_receiver_says_why(api: Api, owner: tuple[int, str]) -> None:
    project_id, token = owner
    base = P.format(project_id)
    with http_receiver() as gone:
        url = gone.url
    body = {"name": "x", "trigger": "new_error", "actions": [{"channel": "slack", "target": url}]}
    rule = api.call("POST", base + "/alert_rules", token, json=body).json()
    action = rule["actions"][0]
    answer = api.call(
        "POST", f"{base}/alert_rules/{rule['id']}/actions/{action['id']}/test", token
    ).json()
    assert answer["ok"] is False and "Could not reach 127.0.0.1" in answer["error"]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (
            {"name": "x", "trigger": "surge"},
            "threshold is missing or invalid (a surge needs N >= 1)",
        ),
        (
            {"name": "x", "trigger": "release_health"},
            "crash_free_below is missing or invalid (a percentage)",
        ),
        ({"name": "x", "trigger": "sometimes"}, "trigger is invalid"),
        ({"name": "", "trigger": "new_error"}, "name is invalid"),
        (
            {"name": "x", "trigger": "new_error", "tag_value": "v"},
            "tag_key is missing (tag_value needs it)",
        ),
        (
            {"name": "x", "trigger": "new_error", "cooldown_minutes": 10081},
            "cooldown_minutes is invalid",
        ),
        (
            {"name": "x", "trigger": "new_error", "actions": [{"channel": "sms"}]},
            "channel is invalid",
        ),
        (
            {"name": "x", "trigger": "new_error", "actions": [{"channel": "webhook"}]},
            "target is missing (the receiver's URL)",
        ),
    ],
)
def test_invalid_rules_are_refused_with_the_field(
    api: Api, owner: tuple[int, str], body: dict[str, object], error: str
) -> None:
    project_id, token = owner
    r = api.call("POST", P.format(project_id) + "/alert_rules", token, json=body)
    assert (r.status_code, r.json()) == (400, {"error": error})


def test_a_local_url_is_refused(api: Api, owner: tuple[int, str]) -> None:
    project_id, token = owner
    api.settings.alert_allow_local_network = False
    body = {
        "name": "x",
        "trigger": "new_error",
        "actions": [{"channel": "discord", "target": "http://169.254.169.254/latest"}],
    }
    r = api.call("POST", P.format(project_id) + "/alert_rules", token, json=body)
    assert r.status_code == 400
    assert "Requests to the local network are not allowed" in r.json()["message"]


def test_rules_per_project_are_limited(api: Api, owner: tuple[int, str]) -> None:
    project_id, token = owner
    api.settings.alert_max_rules_per_project = 2
    url = P.format(project_id) + "/alert_rules"
    for _ in range(2):
        assert (
            api.call("POST", url, token, json={"name": "r", "trigger": "new_error"}).status_code
            == 201
        )
    r = api.call("POST", url, token, json={"name": "r", "trigger": "new_error"})
    assert (r.status_code, r.json()) == (400, {"error": "rules are limited to 2 per project"})


def test_actions_per_rule_are_limited(api: Api, owner: tuple[int, str]) -> None:
    project_id, token = owner
    api.settings.alert_max_actions_per_rule = 2
    base = P.format(project_id) + "/alert_rules"
    email = {"channel": "email", "target": "a@example.com"}
    rule = api.call("POST", base, token, json={"name": "r", "trigger": "new_error"}).json()
    for _ in range(2):
        assert (
            api.call("POST", f"{base}/{rule['id']}/actions", token, json=email).status_code == 201
        )
    r = api.call("POST", f"{base}/{rule['id']}/actions", token, json=email)
    assert (r.status_code, r.json()) == (400, {"error": "actions are limited to 2 per rule"})


def test_updates_change_the_fields_given(api: Api, owner: tuple[int, str]) -> None:
    project_id, token = owner
    base = P.format(project_id) + "/alert_rules"
    rule = api.call(
        "POST", base, token, json={"name": "r", "trigger": "new_error", "environment": "prod"}
    ).json()
    changed = api.call("PUT", f"{base}/{rule['id']}", token, json={"min_level": "error"}).json()
    assert (changed["environment"], changed["min_level"]) == ("prod", "error")
    cleared = api.call("PUT", f"{base}/{rule['id']}", token, json={"environment": None}).json()
    assert cleared["environment"] is None
    assert api.call("PUT", f"{base}/{rule['id']}", token, json={"name": None}).status_code == 400
    assert api.call("DELETE", f"{base}/{rule['id']}", token).status_code == 204
    assert api.call("GET", f"{base}/{rule['id']}", token).json() == {
        "message": "404 Alert Rule Not Found"
    }


def test_the_delivery_log_pages_by_keyset(api: Api, owner: tuple[int, str]) -> None:
    project_id, token = owner
    with api.db.write() as conn:
        for n in range(5):
            nid = alert_outbox.add_notification(
                conn,
                project_id=project_id,
                rule_id=None,
                kind="new_error",
                error_id=None,
                payload={"project": {"id": project_id, "path": "acme/web", "name": "web"}},
                now=100.0 + n,
            )
            receiver = alert_outbox.NewDelivery("email", f"u{n}@example.com")
            alert_outbox.add_deliveries(
                conn, project_id, nid, [receiver], now=100.0 + n, due=2e9, retry_period_s=1
            )
    url = P.format(project_id) + "/alert_deliveries?per_page=2"
    seen = []
    while url:
        r = api.call("GET", url, token)
        seen += [d["recipient"] for d in r.json()]
        link = r.headers.get("link", "")
        url = link.split(">", 1)[0].lstrip("<").replace("http://testserver", "") if link else ""
    assert seen == [f"u{n}@example.com" for n in (4, 3, 2, 1, 0)]
    bad = api.call("GET", P.format(project_id) + "/alert_deliveries?cursor=nonsense", token)
    assert (bad.status_code, bad.json()) == (400, {"error": "cursor is invalid"})


def test_my_notification_settings(api: Api, owner: tuple[int, str]) -> None:
    project_id, token = owner
    url = P.format(project_id) + "/notification_settings"
    default = api.call("GET", url, token).json()
    assert default["email"] is True and default["custom"] is False  # an Owner
    saved = api.call("PUT", url, token, json={"email": True, "triggers": ["regression"]}).json()
    assert saved == {"email": True, "triggers": ["regression"], "custom": True}
    bad = api.call("PUT", url, token, json={"email": True, "triggers": ["everything"]})
    assert bad.status_code == 400
