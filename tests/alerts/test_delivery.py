"""Delivery through real receivers: signatures, retries, backoff, permanent failures,
leases across senders, retry now."""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

import orjson
import pytest

from tests.alerts.conftest import World, error_event
from tests.alerts.receivers import Receiver, http_receiver, verify_signature
from tracebox.alerts.sender import AlertSender
from tracebox.store import alert_outbox
from tracebox.store.alerts import Channel

SECRET = "a-webhook-secret-of-some-length"


def test_webhook_receiver_verifies_the_signature_and_reads_the_schema(world: World) -> None:
    rule = world.rule(name="New errors")
    with http_receiver() as receiver:
        world.action(rule, Channel.WEBHOOK, receiver.url, secret=SECRET)
        world.send_events(error_event())
        world.deliver_all()
    [request] = receiver.requests
    assert verify_signature(SECRET, request.headers, request.body)
    assert not verify_signature("another secret of the same kind", request.headers, request.body)
    tampered = request.body.replace(b"ValueError", b"ValueErrox")
    assert not verify_signature(SECRET, request.headers, tampered)
    doc = orjson.loads(request.body)
    assert doc["version"] == 1 and doc["kind"] == "new_error"
    assert doc["id"] == request.headers["Idempotency-Key"] == request.headers["X-Tracebox-Delivery"]
    assert doc["project"]["path"] == "acme/web"
    assert doc["rule"]["name"] == "New errors"
    error = doc["error"]
    assert error["title"] == "ValueError: bad value"
    assert error["url"] == f"http://tracebox.test/acme/web/-/error_tracking/{error['id']}"
    assert error["top_frame"] == "app/handlers.py in handle at line 42"
    assert (error["events"], error["users"]) == (1, 1)
    assert doc["event"]["release"] == "web@1.0.0"
    [delivery] = world.deliveries()
    assert (delivery.status, delivery.attempts, delivery.response_status) == ("sent", 1, 200)


def test_500_five_times_then_200_is_one_successful_delivery(world: World) -> None:
    rule = world.rule()
    failing = Receiver(answers=[(500, {}, b"down")] * 5)
    with http_receiver(failing) as receiver:
        world.action(rule, Channel.WEBHOOK, receiver.url, secret=SECRET)
        world.send_events(error_event())
        world.deliver_all()
        time.sleep(0.1)
        world.sender.drain()  # nothing more is due: no repeat
    assert [r.status for r in receiver.requests] == [500] * 5 + [200]
    assert len({r.headers["Idempotency-Key"] for r in receiver.requests}) == 1
    [delivery] = world.deliveries()
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("sent", 6, None)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 422])
def test_a_4xx_answer_is_permanent(world: World, status: int) -> None:
    rule = world.rule()
    with http_receiver(Receiver(default=(status, {}, b"no such hook"))) as receiver:
        world.action(rule, Channel.SLACK, receiver.url)
        world.send_events(error_event())
        world.deliver_all()
    assert len(receiver.requests) == 1
    [delivery] = world.deliveries()
    assert delivery.status == "failed"
    assert delivery.last_error == f"HTTP {status}"
    assert delivery.response_excerpt == "no such hook"


@pytest.mark.parametrize("status", [408, 429, 503])
def test_retry_after_is_honoured(world: World, status: int) -> None:
    rule = world.rule()
    answers = [(status, {"Retry-After": "120"}, b"later")]
    with http_receiver(Receiver(answers=answers)):
        world.action(rule, Channel.DISCORD, "http://127.0.0.1:1/unused")
    with http_receiver(Receiver(answers=list(answers))) as receiver:
        with world.db.write() as conn:
            from tracebox.store.tables import alert_actions

            conn.execute(
                alert_actions.update().values(target=world.ctx.cipher.encrypt(receiver.url))
            )
        world.send_events(error_event())
        before = time.time()
        world.sender.drain()
    [delivery] = world.deliveries()
    assert delivery.status == "retrying"
    assert before + 119 <= delivery.next_attempt_at <= time.time() + 121
    assert len(receiver.requests) == 1


def test_retries_stop_when_the_retry_period_ends(world: World) -> None:
    world.settings.alert_retry_period_hours = 0.2 / 3600  # 0.2 s
    world.worker.alert_policy.retry_period_s = 0.2
    rule = world.rule()
    with http_receiver(Receiver(default=(502, {}, b"bad gateway"))) as receiver:
        world.action(rule, Channel.TEAMS, receiver.url)
        world.send_events(error_event())
        world.deliver_all()
    [delivery] = world.deliveries()
    assert delivery.status == "failed"
    assert delivery.last_error is not None and "retry period ended" in delivery.last_error
    assert 1 <= len(receiver.requests) == delivery.attempts


def test_an_unreachable_receiver_is_retried(world: World) -> None:
    rule = world.rule()
    with http_receiver() as receiver:
        port = receiver.port
    world.action(rule, Channel.WEBHOOK, f"http://127.0.0.1:{port}/hook", secret=SECRET)
    world.send_events(error_event())
    world.sender.drain()
    [delivery] = world.deliveries()
    assert delivery.status == "retrying"
    assert delivery.last_error is not None and "Could not reach 127.0.0.1" in delivery.last_error
    with http_receiver(port=port) as receiver:
        world.deliver_all()
    assert [r.status for r in receiver.requests] == [200]


def test_retry_now_makes_a_failed_delivery_due(world: World) -> None:
    rule = world.rule()
    with http_receiver(Receiver(answers=[(404, {}, b"gone")])) as receiver:
        world.action(rule, Channel.WEBHOOK, receiver.url, secret=SECRET)
        world.send_events(error_event())
        world.deliver_all()
        [failed] = world.deliveries()
        assert failed.status == "failed"
        with world.db.write() as conn:
            assert alert_outbox.retry_now(
                conn, world.project.id, failed.id, now=time.time(), period_s=3600
            )
            assert not alert_outbox.retry_now(
                conn, world.project.id + 1, failed.id, now=time.time(), period_s=3600
            )
        world.deliver_all()
    assert [r.status for r in receiver.requests] == [404, 200]
    assert world.deliveries()[0].status == "sent"


def test_two_senders_never_send_one_delivery_twice(world: World) -> None:
    rule = world.rule()
    with http_receiver() as receiver:
        world.action(rule, Channel.WEBHOOK, receiver.url, secret=SECRET)
        world.send_events(*[error_event(f"Error{n}") for n in range(8)])
        senders = [AlertSender(world.db, world.settings, world.ctx) for _ in range(3)]
        threads = [threading.Thread(target=s.drain) for s in senders]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        world.deliver_all()
    keys = [r.headers["Idempotency-Key"] for r in receiver.requests]
    assert len(keys) == len(set(keys)) == len(world.deliveries())


def test_an_expired_lease_is_sent_again_with_the_same_key(world: World) -> None:
    rule = world.rule()
    with http_receiver() as receiver:
        world.action(rule, Channel.WEBHOOK, receiver.url, secret=SECRET)
        world.send_events(error_event())
        with world.db.write() as conn:  # a sender that died after claiming
            [claimed] = alert_outbox.claim(conn, owner="dead", now=time.time(), limit=5, lease_s=0)
        with world.db.write() as conn:
            assert (
                alert_outbox.claim(conn, owner="x", now=time.time() - 1, limit=5, lease_s=1) == []
            )
        world.deliver_all()
    [request] = receiver.requests
    assert request.headers["Idempotency-Key"] == claimed.idempotency_key
    with world.db.write() as conn:  # the dead sender's late answer changes nothing
        assert not alert_outbox.finish(conn, claimed.id, "dead", status="failed", now=time.time())
    assert world.deliveries()[0].status == "sent"


def test_the_sender_unit_delivers_beats_and_stops(world: World) -> None:
    from dataclasses import dataclass, field

    from tests.helpers import wait_for
    from tracebox.alerts.unit import run_unit

    @dataclass
    class Ctx:  # what the supervisor hands a unit
        settings: Any
        db: Any
        stop: threading.Event = field(default_factory=threading.Event)
        beats: list[float] = field(default_factory=list)

        def beat(self) -> None:
            self.beats.append(time.time())

    rule = world.rule()
    with http_receiver() as receiver:
        world.action(rule, Channel.WEBHOOK, receiver.url, secret=SECRET)
        world.send_events(error_event())
        ctx = Ctx(world.settings, world.db)
        unit = threading.Thread(target=run_unit, args=(ctx,))
        unit.start()
        try:
            wait_for(lambda: receiver.requests)
            wait_for(lambda: len(ctx.beats) >= 2)
        finally:
            ctx.stop.set()
            unit.join(10)
    assert not unit.is_alive()
    assert world.deliveries()[0].status == "sent"


def test_a_stopping_sender_hands_claimed_deliveries_back(world: World) -> None:
    rule = world.rule()
    with http_receiver() as receiver:
        world.action(rule, Channel.WEBHOOK, receiver.url, secret=SECRET)
        world.send_events(error_event())
        with world.db.write() as conn:
            [claimed] = alert_outbox.claim(
                conn, owner=world.sender.owner, now=time.time(), limit=5, lease_s=60
            )
        world.sender._stop.set()
        assert world.sender.attempt(claimed) is None
    assert receiver.requests == []
    [delivery] = world.deliveries()
    assert (delivery.status, delivery.attempts) == ("retrying", 0)


def test_a_database_outage_is_logged_as_one_episode(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    """Every pass fails while the database is down: one line for the start, no tracebacks
    (the durability fault runner counts the log lines of a 20 s outage)."""
    from tests.helpers import free_port, wait_for
    from tracebox.store import Database

    down = Database(f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/none")
    settings = dataclasses.replace(world.settings, alert_sender_poll_interval_ms=1)
    sender = AlertSender(down, settings, world.ctx)
    passes: list[float] = []
    stop = threading.Event()
    thread = threading.Thread(target=sender.run, args=(stop, lambda: passes.append(0)))
    with caplog.at_level("INFO", logger="tracebox.alerts.sender"):
        thread.start()
        try:
            wait_for(lambda: len(passes) >= 4)
        finally:
            stop.set()
            thread.join(10)
            down.dispose()
    lines = [r for r in caplog.records if r.name == "tracebox.alerts.sender"]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert "database unavailable" in lines[0].getMessage()
    assert not lines[0].exc_info
