"""The workflow's alerts (issue 15) wired end to end: an assignment made through the
error source emails the assignee over real SMTP, and an ignore condition that the real
digest worker finds passed fires the project's ``unignored`` rules over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

from tests.alerts.conftest import World, error_event
from tests.alerts.receivers import http_receiver, smtp_server
from tests.alerts.test_email import use_smtp
from tests.alerts.test_triggers import SECRET, kinds, list_errors
from tracebox.models import AccessLevel, ErrorStatus, User
from tracebox.store.alerts import Channel, Trigger
from tracebox.tracking import IntegratedSource
from tracebox.tracking.models import ActivityKind, ErrorChange, StatusChange, UserRef


def ref(user: User) -> UserRef:
    return UserRef(user.id, user.username, user.name, user.email)


def only_error(world: World) -> int:
    with world.db.read() as conn:
        [error] = list_errors(conn, world.project.id)
    return error.id


def test_assigning_an_error_emails_the_assignee(world: World, tmp_path: Path) -> None:
    world.send_events(error_event())
    error_id = only_error(world)
    dev = world.user(AccessLevel.DEVELOPER, "dev")
    source = IntegratedSource(world.db, world.project.id)
    with smtp_server() as box:
        use_smtp(world, box.port, "none")
        source.update(error_id, ErrorChange(assignee=ref(dev)), ref(world.owner))
        source.update(error_id, ErrorChange(assignee=ref(world.owner)), ref(world.owner))
        world.deliver_all()
    # the owner took it themselves: no email for that; the developer got one
    assert box.envelopes == [("alerts@tracebox.test", ["dev@example.com"])]
    [message] = box.messages
    assert "Assigned to you" in message["Subject"]
    plain = message.get_body(("plain",))
    assert plain is not None
    text = plain.get_content()
    assert f"http://tracebox.test/acme/web/-/error_tracking/{error_id}" in text
    assert "The error was assigned to dev." in text


def test_an_ignore_condition_passing_in_the_digest_fires_unignored_rules(
    world: World,
) -> None:
    rule = world.rule(Trigger.UNIGNORED, name="Back from ignore")
    world.send_events(error_event())
    error_id = only_error(world)
    source = IntegratedSource(world.db, world.project.id)
    ignore = StatusChange(ErrorStatus.IGNORED, ignore_count=2)
    source.update(error_id, ErrorChange(status=ignore), ref(world.owner))
    with http_receiver() as hook:
        world.action(rule, Channel.WEBHOOK, hook.url, secret=SECRET)
        world.send_events(error_event())  # one more: still ignored, nothing fires
        assert source.get(error_id).error.status is ErrorStatus.IGNORED
        assert kinds(world) == []
        world.send_events(error_event())  # the second: the condition passed
        assert source.get(error_id).error.status is ErrorStatus.UNRESOLVED
        world.deliver_all()
    assert kinds(world) == ["unignored"]
    [request] = hook.answered(200)
    body = json.loads(request.body)
    assert body["kind"] == "unignored"
    assert str(error_id) in json.dumps(body)
    last = source.activity(error_id)[-1]
    assert (last.kind, last.user) == (ActivityKind.SET_UNRESOLVED, None)
