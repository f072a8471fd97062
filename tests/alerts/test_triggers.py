"""Triggers, filters, cooldowns and storm folding, through the real digest worker."""

from __future__ import annotations

import time

import orjson
import sqlalchemy as sa

from tests.alerts.conftest import World, error_event
from tests.alerts.receivers import http_receiver
from tracebox.alerts import AlertPolicy, ErrorActivity, EventInfo, hooks
from tracebox.alerts.matching import is_later_release
from tracebox.models import AccessLevel, ErrorStatus
from tracebox.store import errors_read
from tracebox.store.alerts import Channel, Trigger, put_user_settings
from tracebox.store.tables import alert_cooldowns, alert_notifications

SECRET = "a-webhook-secret-of-some-length"


def list_errors(conn: sa.Connection, project_id: int) -> list[errors_read.ErrorRow]:
    return errors_read.list_errors(
        conn,
        project_id,
        status=None,
        search=None,
        sort="last_seen",
        after=None,
        before=None,
        limit=100,
    )


def kinds(world: World) -> list[str]:
    with world.db.read() as conn:
        return [r[0] for r in conn.execute(sa.select(alert_notifications.c.kind))]


def test_a_new_error_fires_once(world: World) -> None:
    rule = world.rule()
    world.action(rule, Channel.WEBHOOK, "http://127.0.0.1:9/hook", secret=SECRET)
    world.send_events(error_event(), error_event())
    world.send_events(error_event())
    assert kinds(world) == ["new_error"]


def test_a_storm_of_500_new_errors_is_one_digest_per_rule_and_channel(world: World) -> None:
    rule = world.rule(name="Storm watch")
    other = world.rule(name="Second rule")
    with http_receiver() as slack, http_receiver() as hook:
        world.action(rule, Channel.SLACK, slack.url)
        world.action(rule, Channel.WEBHOOK, hook.url, secret=SECRET)
        world.action(other, Channel.WEBHOOK, hook.url, secret=SECRET)
        start = time.time()
        busy = [error_event("BusiestError", "the busiest")] * 5
        world.send_events(*busy, *[error_event(f"DeployError{n}") for n in range(499)])
        assert time.time() - start < 60  # "in a minute"
        world.deliver_all()
    threshold = world.settings.alert_storm_threshold
    storm = [orjson.loads(r.body) for r in hook.requests if b'"kind":"storm"' in r.body]
    assert len(storm) == 2  # one per rule on this channel
    assert len(hook.requests) == 2 * (threshold + 1)  # not 1000
    assert len(slack.requests) == threshold + 1
    digest = next(d for d in storm if d["rule"]["name"] == "Storm watch")
    assert digest["title"] == "500 new errors in acme/web in the last 5 minutes"
    assert digest["details"]["folded"] == 500 - threshold
    assert len(digest["errors"]) == 10
    assert digest["errors"][0]["title"] == "BusiestError: the busiest"
    assert digest["errors"][0]["events"] == 5
    slack_digest = orjson.loads(slack.requests[-1].body)
    assert "500 new errors in acme/web" in slack_digest["text"]


def test_a_regression_fires_after_resolve(world: World) -> None:
    rule = world.rule(Trigger.REGRESSION, cooldown_minutes=30)
    world.action(rule, Channel.WEBHOOK, "http://127.0.0.1:9/hook", secret=SECRET)
    world.send_events(error_event())
    assert kinds(world) == []  # new, not a regression
    with world.db.write() as conn:
        [error] = list_errors(conn, world.project.id)
        errors_read.set_status(conn, world.project.id, error.id, ErrorStatus.RESOLVED)
    world.send_events(error_event())
    assert kinds(world) == ["regression"]
    with world.db.write() as conn:  # resolved again at once: the cooldown holds
        errors_read.set_status(conn, world.project.id, error.id, ErrorStatus.RESOLVED)
    world.send_events(error_event())
    assert kinds(world) == ["regression"]


def test_resolved_in_release_counts_only_later_releases() -> None:
    assert is_later_release("web@1.10.0", "web@1.9.2")
    assert is_later_release("2.0", "1.9")
    assert not is_later_release("web@1.9.2", "web@1.9.2")
    assert not is_later_release("web@1.9.0", "web@1.9.2")
    assert not is_later_release(None, "web@1.9.2")
    assert is_later_release(None, None)


def test_a_surge_fires_once_per_cooldown(world: World) -> None:
    rule = world.rule(Trigger.SURGE, threshold=5, window_minutes=10, cooldown_minutes=30)
    world.action(rule, Channel.WEBHOOK, "http://127.0.0.1:9/hook", secret=SECRET)
    world.send_events(*[error_event()] * 4)
    assert kinds(world) == []
    world.send_events(error_event())
    assert kinds(world) == ["surge"]
    world.send_events(*[error_event()] * 20)
    assert kinds(world) == ["surge"]
    with world.db.write() as conn:  # 31 minutes later, as far as the cooldown knows
        conn.execute(alert_cooldowns.update().values(fired_at=time.time() - 31 * 60))
    world.send_events(error_event())
    assert kinds(world) == ["surge", "surge"]
    [first, _] = world.deliveries()
    assert first.payload["details"]["events"] == 5


def test_a_surge_by_users_counts_distinct_users(world: World) -> None:
    rule = world.rule(Trigger.SURGE, threshold=3, threshold_kind="users", window_minutes=5)
    world.action(rule, Channel.WEBHOOK, "http://127.0.0.1:9/hook", secret=SECRET)
    world.send_events(*[error_event(user={"id": "same"})] * 6)
    assert kinds(world) == []
    world.worker.alert_policy = AlertPolicy.from_settings(world.settings)  # no recheck pause
    world.send_events(*[error_event(user={"id": f"u{n}"}) for n in range(2)])
    assert kinds(world) == ["surge"]
    assert world.deliveries()[0].payload["details"]["users"] == 3


def test_a_surge_compared_with_the_day_before(world: World) -> None:
    rule = world.rule(Trigger.SURGE, threshold=2, window_minutes=10, compare_factor=3)
    world.action(rule, Channel.WEBHOOK, "http://127.0.0.1:9/hook", secret=SECRET)
    yesterday = time.time() - 86400 - 60  # the same 10 minutes, a day earlier
    world.send_events(*[error_event(timestamp=yesterday)] * 2)
    world.send_events(*[error_event()] * 5)  # 5 < 3 x 2
    assert kinds(world) == []
    world.send_events(error_event())  # 6 >= 3 x 2
    assert kinds(world) == ["surge"]
    assert world.deliveries()[0].payload["details"]["day_earlier"] == 2


def test_filters_environment_level_tag_and_release(world: World) -> None:
    rule = world.rule(
        environment="production",
        min_level="error",
        tag_key="browser",
        tag_value="Firefox",
        release="web@1.*",
    )
    world.action(rule, Channel.WEBHOOK, "http://127.0.0.1:9/hook", secret=SECRET)
    world.send_events(
        error_event("Staging", environment="staging"),
        error_event("Warning", level="warning"),
        error_event("Chrome", tags={"browser": "Chrome"}),
        error_event("OldRelease", release="web@0.9"),
    )
    assert kinds(world) == []
    world.send_events(error_event("FatalInProduction", level="fatal"))
    assert kinds(world) == ["new_error"]


def test_release_health_fires_once_below_the_rate(world: World) -> None:
    rule = world.rule(Trigger.RELEASE_HEALTH, crash_free_below=90, threshold=10)
    world.action(rule, Channel.WEBHOOK, "http://127.0.0.1:9/hook", secret=SECRET)
    world.worker.alert_policy.release_health_interval_s = 0  # count at every batch
    now = time.time()

    def session(n: int, status: str) -> dict[str, object]:
        return {
            "sid": f"{n:032x}",
            "did": f"d{n}",
            "attrs": {"release": "web@2.0", "environment": "production"},
            "started": now,
            "timestamp": now,
            "seq": 0,
            "status": status,
            "errors": 0,
            "duration": 1.0,
        }

    world.send_sessions(*[session(n, "crashed") for n in range(5)])  # 5 sessions: too few
    assert kinds(world) == []
    world.send_sessions(*[session(n, "exited") for n in range(5, 10)])  # 50% after 10
    assert kinds(world) == ["release_health"]
    world.send_sessions(session(11, "crashed"))
    assert kinds(world) == ["release_health"]  # once per release, while it stays below
    details = world.deliveries()[0].payload["details"]
    assert (details["sessions"], details["crashed"], details["crash_free_rate"]) == (10, 5, 50.0)


def _activity(world: World) -> ErrorActivity:
    with world.db.read() as conn:
        [error] = list_errors(conn, world.project.id)
    event = EventInfo("e" * 32, time.time(), "error", "production", "web@1.0.0", error.title, "")
    return ErrorActivity(error.id, world.project.id, event)


def test_the_ignored_condition_hook_fires_unignored_rules(world: World) -> None:
    rule = world.rule(Trigger.UNIGNORED)
    world.action(rule, Channel.WEBHOOK, "http://127.0.0.1:9/hook", secret=SECRET)
    world.send_events(error_event())
    with world.db.write() as conn:
        assert hooks.ignored_condition_passed(conn, AlertPolicy(), _activity(world)) == 1
        assert hooks.ignored_condition_passed(conn, AlertPolicy(), _activity(world)) == 0
    assert kinds(world) == ["unignored"]


def test_the_assigned_hook_emails_the_assignee_unless_they_opted_out(world: World) -> None:
    world.send_events(error_event())
    dev = world.user(AccessLevel.DEVELOPER, "dev")
    guest = world.user(AccessLevel.GUEST, "guest")
    with world.db.write() as conn:
        assert hooks.assigned(
            conn, AlertPolicy(), _activity(world), dev.id, actor_id=world.owner.id
        )
        assert not hooks.assigned(conn, AlertPolicy(), _activity(world), dev.id, actor_id=dev.id)
        assert not hooks.assigned(conn, AlertPolicy(), _activity(world), guest.id)
        put_user_settings(conn, dev.id, world.project.id, email=True, kinds=["new_error"])
        assert not hooks.assigned(conn, AlertPolicy(), _activity(world), dev.id)
    [delivery] = world.deliveries()
    assert (delivery.kind, delivery.recipient) == ("assigned", "dev@example.com")


def test_email_goes_to_maintainers_by_default_and_follows_settings(world: World) -> None:
    maintainer = world.user(AccessLevel.MAINTAINER, "maint")
    reporter = world.user(AccessLevel.REPORTER, "rep")
    world.user(AccessLevel.DEVELOPER, "dev")
    world.user(AccessLevel.GUEST, "guest")
    with world.db.write() as conn:
        put_user_settings(conn, reporter.id, world.project.id, email=True, kinds=["new_error"])
        put_user_settings(conn, maintainer.id, world.project.id, email=False, kinds=["new_error"])
    rule = world.rule()
    world.action(rule, Channel.EMAIL, "")
    world.action(rule, Channel.EMAIL, "oncall@example.com, team@example.com")
    world.send_events(error_event())
    recipients = sorted(d.recipient for d in world.deliveries())
    assert recipients == [
        "oncall@example.com",
        "owner@example.com",
        "rep@example.com",
        "team@example.com",
    ]


def test_an_alerts_failure_never_costs_an_event(world: World) -> None:
    rule = world.rule()
    world.action(rule, Channel.WEBHOOK, "http://127.0.0.1:9/hook", secret=SECRET)
    with world.db.write() as conn:  # a corrupt rule: its trigger is unknown
        from tracebox.store.tables import alert_rules

        conn.execute(alert_rules.update().values(trigger="bogus"))
    world.send_events(error_event())
    with world.db.read() as conn:
        assert len(list_errors(conn, world.project.id)) == 1
    assert kinds(world) == []


def test_storm_threshold_at_the_limit_and_past_it(world: World) -> None:
    threshold = world.settings.alert_storm_threshold
    rule = world.rule()
    world.action(rule, Channel.WEBHOOK, "http://127.0.0.1:9/hook", secret=SECRET)
    world.send_events(*[error_event(f"AtLimit{n}") for n in range(threshold)])
    assert kinds(world) == ["new_error"] * threshold  # at the limit: one by one
    world.send_events(error_event("PastLimit"))
    assert kinds(world) == ["new_error"] * threshold + ["storm"]
    storm = world.deliveries()[-1]
    assert (storm.payload["individual"], storm.payload["folded"]) == (threshold, 1)
