"""Outbound safety (SSRF): refused before any connection is made; limits of answers."""

from __future__ import annotations

import pytest

from tests.alerts.conftest import World
from tests.alerts.receivers import Receiver, http_receiver
from tracebox.alerts import rules as alert_rules
from tracebox.alerts.outbound import (
    OutboundOptions,
    RefusedDestination,
    check,
    parse_retry_after,
    post,
)
from tracebox.errors import InvalidParameter
from tracebox.store.alerts import Channel

STRICT = OutboundOptions(allow_local_network=False)

# Every one of these is refused by address checks alone: no packet leaves the machine.
SSRF_TARGETS = [
    "http://127.0.0.1/hook",
    "http://localhost:8080/hook",
    "http://[::1]/hook",
    "http://0.0.0.0/hook",
    "http://10.0.0.1/hook",
    "http://172.16.5.4/hook",
    "http://192.168.1.1/hook",
    "http://169.254.169.254/latest/meta-data/",  # cloud metadata
    "http://100.64.0.1/hook",  # carrier-grade NAT
    "http://[::ffff:127.0.0.1]/hook",  # IPv4-mapped loopback
    "http://[fd00::1]/hook",  # unique local
    "http://2130706433/hook",  # 127.0.0.1 as one number
    "http://0x7f.1/hook",
]
NOT_HTTP = ["file:///etc/passwd", "gopher://127.0.0.1/", "ftp://example.com/", "javascript:x"]


@pytest.mark.parametrize("url", SSRF_TARGETS)
def test_local_and_metadata_addresses_are_refused(url: str) -> None:
    with pytest.raises(RefusedDestination, match="local network"):
        check(url, STRICT)
    answer = post(url, b"{}", {}, STRICT)
    assert not answer.ok and answer.permanent and answer.status is None
    assert answer.error is not None and "TRACEBOX_ALERT_ALLOW_LOCAL_NETWORK" in answer.error


@pytest.mark.parametrize("url", [*NOT_HTTP, "http://user:pw@example.com/", "http://x:99999/"])
def test_urls_that_are_not_plain_http_are_refused(url: str) -> None:
    with pytest.raises(RefusedDestination):
        check(url, STRICT)


def test_a_url_past_the_length_limit_is_refused() -> None:
    base = "http://127.0.0.1/"
    check(base + "a" * (2048 - len(base)), OutboundOptions(allow_local_network=True))
    with pytest.raises(RefusedDestination):
        check(base + "a" * (2049 - len(base)), OutboundOptions(allow_local_network=True))


@pytest.mark.parametrize("url", SSRF_TARGETS[:3] + SSRF_TARGETS[7:8])
def test_an_action_to_a_local_address_is_refused_when_saved(world: World, url: str) -> None:
    world.settings.alert_allow_local_network = False
    strict = world.ctx.__class__(**{**world.ctx.__dict__, "outbound": STRICT})
    limits = alert_rules.Limits()
    with pytest.raises(RefusedDestination):
        alert_rules.prepare_target(strict, Channel.WEBHOOK, url, limits)


def test_a_stored_action_is_checked_again_at_send_time(world: World) -> None:
    rule = world.rule()
    world.action(rule, Channel.SLACK, "http://127.0.0.1:9/hook")  # allowed then
    strict_ctx = world.ctx.__class__(**{**world.ctx.__dict__, "outbound": STRICT})
    world.sender.ctx = strict_ctx  # the administrator turned local network off
    from tests.alerts.conftest import error_event

    world.send_events(error_event())
    world.sender.drain()
    [delivery] = world.deliveries()
    assert delivery.status == "failed"
    assert delivery.last_error is not None and "local network" in delivery.last_error


def test_redirects_are_not_followed() -> None:
    with http_receiver(Receiver(default=(302, {"Location": "http://10.0.0.1/"}, b""))) as r:
        answer = post(r.url, b"{}", {}, OutboundOptions(allow_local_network=True))
    assert not answer.ok and answer.permanent and answer.status == 302
    assert len(r.requests) == 1


def test_an_answer_is_read_only_up_to_the_cap() -> None:
    options = OutboundOptions(allow_local_network=True, max_response_bytes=1000)
    with http_receiver(Receiver(default=(200, {}, b"x" * 1000))) as r:
        at_limit = post(r.url, b"{}", {}, options)
    with http_receiver(Receiver(default=(200, {}, b"y" * 5_000_000))) as r:
        past = post(r.url, b"{}", {}, options)
    assert at_limit.ok and at_limit.body == "x" * 1000
    assert past.ok and past.body == "y" * 1000


def test_retry_after_as_seconds_or_a_date() -> None:
    assert parse_retry_after("120") == 120
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412420.0) == 60
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_email_targets_are_bounded(world: World) -> None:
    limits = alert_rules.Limits(max_recipients=2)
    alert_rules.prepare_target(world.ctx, Channel.EMAIL, "a@example.com b@example.com", limits)
    with pytest.raises(InvalidParameter, match="more than 2"):
        alert_rules.prepare_target(
            world.ctx, Channel.EMAIL, "a@example.com b@example.com c@example.com", limits
        )
    with pytest.raises(InvalidParameter, match="not an email"):
        alert_rules.prepare_target(world.ctx, Channel.EMAIL, "not-an-address", limits)
