"""Email through a real SMTP server (aiosmtpd): plain, STARTTLS and implicit TLS."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.alerts.conftest import World, error_event
from tests.alerts.receivers import smtp_server
from tracebox.alerts.channels.email import SmtpOptions
from tracebox.store.alerts import Channel


def use_smtp(world: World, port: int, security: str, ca_file: str = "") -> None:
    smtp = SmtpOptions(
        host="localhost",
        port=port,
        security=security,
        sender="Tracebox <alerts@tracebox.test>",
        ca_file=ca_file,
        timeout_s=5,
    )
    world.sender.ctx = dataclasses.replace(world.sender.ctx, smtp=smtp)


@pytest.mark.parametrize("security", ["none", "starttls", "tls"])
def test_an_email_for_a_new_error(world: World, security: str, tmp_path: Path) -> None:
    rule = world.rule(name="New errors")
    world.action(rule, Channel.EMAIL, "")  # the project's members: the owner by default
    with smtp_server(security, tmp_path) as box:
        use_smtp(world, box.port, security, str(tmp_path / "smtp-cert.pem"))
        world.send_events(error_event())
        world.deliver_all()
    [message] = box.messages
    assert box.envelopes == [("alerts@tracebox.test", ["owner@example.com"])]
    assert message["Subject"] == "[acme/web] New error: ValueError: bad value"
    assert message["List-Unsubscribe"] == "<http://tracebox.test/acme/web/-/alerts/notifications>"
    [delivery] = world.deliveries()
    assert message["Message-ID"] == f"<{delivery.idempotency_key}@tracebox.test>"
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    link = f"http://tracebox.test/acme/web/-/error_tracking/{delivery.error_id}"
    for part in (text, html):
        assert link in part
        assert "app/handlers.py in handle at line 42" in part
        assert "http://tracebox.test/acme/web/-/alerts/notifications" in part
    assert "Events: 1" in text and "Users: 1" in text
    assert delivery.status == "sent"


def test_html_escapes_what_the_event_says(world: World, tmp_path: Path) -> None:
    rule = world.rule()
    world.action(rule, Channel.EMAIL, "oncall@example.com")
    with smtp_server() as box:
        use_smtp(world, box.port, "none")
        world.send_events(error_event("XSS", "<script>alert(1)</script>"))
        world.deliver_all()
    html = box.messages[0].get_body(("html",)).get_content()
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_without_smtp_settings_email_fails_with_a_reason(world: World) -> None:
    rule = world.rule()
    world.action(rule, Channel.EMAIL, "oncall@example.com")
    world.send_events(error_event())
    world.deliver_all()
    [delivery] = world.deliveries()
    assert delivery.status == "failed"
    assert delivery.last_error is not None and "TRACEBOX_SMTP_HOST" in delivery.last_error


def test_an_untrusted_certificate_is_retried_not_sent(world: World, tmp_path: Path) -> None:
    rule = world.rule()
    world.action(rule, Channel.EMAIL, "oncall@example.com")
    with smtp_server("starttls", tmp_path) as box:
        use_smtp(world, box.port, "starttls")  # the system's CAs do not know this one
        world.send_events(error_event())
        world.sender.drain()
    [delivery] = world.deliveries()
    assert delivery.status == "retrying" and box.messages == []
    assert delivery.last_error is not None and "CERTIFICATE_VERIFY_FAILED" in delivery.last_error
