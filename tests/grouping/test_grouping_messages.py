"""Events without an exception group on their message, variable parts collapsed."""

from __future__ import annotations

import pytest

from tests.grouping.samples import Event
from tracebox.grouping import calculate


def _message(formatted: str, template: str | None = None, *params: str) -> Event:
    logentry = {"formatted": formatted, "params": list(params)}
    if template is not None:
        logentry["message"] = template
    return {"platform": "python", "level": "warning", "logentry": logentry}


def _components(message: str) -> list[str]:
    return calculate(_message(message)).components


# (message, normalized): each variable kind, the most specific pattern winning.
NORMALIZED = [
    ("Order 42 not found", "Order <int> not found"),
    ("Took 1.5s, retry in 250ms", "Took <float>s, retry in <int>ms"),
    ("Mail to bob.smith+orders@example.co.uk bounced", "Mail to <email> bounced"),
    ("GET https://api.example.com/v1/orders/42?page=2 failed", "GET <url> failed"),
    ("Connect to 10.0.0.17:5432 refused", "Connect to <ip>:<int> refused"),
    ("Connect to [2001:db8::8a2e:370:7334]:443 refused", "Connect to [<ip>]:<int> refused"),
    ("Peer ::ffff:192.168.0.1 left", "Peer <ip> left"),
    ("Job 550e8400-e29b-41d4-a716-446655440000 failed", "Job <uuid> failed"),
    ("Commit da39a3ee5e6b4b0d3255bfef95601890afd80709 missing", "Commit <sha1> missing"),
    ("Blob d41d8cd98f00b204e9800998ecf8427e missing", "Blob <md5> missing"),
    ("Segfault at 0x7ffe1234abcd", "Segfault at <hex>"),
    ("Session 3f2a1b9c7d0e expired", "Session <hex> expired"),
    ("Expired at 2024-05-01T10:00:00.123Z", "Expired at <date>"),
    ("Expired at 2024-05-01 10:00:00+02:00", "Expired at <date>"),
    ("Report for 2024-05-01 is late", "Report for <date> is late"),
    ("Last-Modified: Wed, 21 Oct 2015 07:28:00 GMT", "Last-Modified: <date>"),
    ("[21/Oct/2015:07:28:00 +0000] GET", "[<date>] GET"),
    ("Due 05/01/2024 or 01.05.2024", "Due <date> or <date>"),
    ("Started Jan 5, 2024 at 10:30:00", "Started <date> at <date>"),
    ("Url https://user@example.com/x", "Url <url>"),  # the URL claims the text first
    ("Read user42 from table_7", "Read user42 from table_7"),  # identifiers stay
    ("no variables here", "no variables here"),
]


@pytest.mark.parametrize("message, normalized", NORMALIZED)
def test_variable_parts_become_placeholders(message: str, normalized: str) -> None:
    assert _components(message) == ["message", normalized]


# Two messages that differ only in a variable part group together.
SAME = [
    ("User 17 logged in from 10.0.0.1", "User 9042 logged in from 192.168.77.3"),
    ("Invoice a1b2c3d4-0000-4000-8000-000000000001 rejected",
     "Invoice 550e8400-e29b-41d4-a716-446655440000 rejected"),
    ("Notify alice@example.com", "Notify bob@example.org"),
    ("Webhook https://a.example.com/h/1 failed", "Webhook http://b.example.org/x?y=2 failed"),
    ("Backup of 2024-01-01 failed", "Backup of 2025-12-31T23:59:59Z failed"),
    ("Handle 0xdeadbeef leaked", "Handle 0x1 leaked"),
    ("Ratio 0.25 too low", "Ratio 12.5 too low"),
    ("first line\nsecond 1\nthird line A", "first line\n\n  second 2  \nthird line B"),
]  # fmt: skip
DIFFERENT = [
    ("Payment failed", "Payment declined"),
    ("User 17 logged in", "User 17 logged out"),
    ("first\nsecond A", "first\nsecond B"),
]


@pytest.mark.parametrize("a, b", SAME)
def test_messages_differing_in_variables_group_together(a: str, b: str) -> None:
    assert calculate(_message(a)).hash == calculate(_message(b)).hash


@pytest.mark.parametrize("a, b", DIFFERENT)
def test_different_messages_group_apart(a: str, b: str) -> None:
    assert calculate(_message(a)).hash != calculate(_message(b)).hash


def test_template_groups_whatever_the_parameters() -> None:
    bob = calculate(_message("Failed for bob: quota", "Failed for %s: %s", "bob", "quota"))
    ann = calculate(_message("Failed for ann: disk", "Failed for %s: %s", "ann", "disk"))
    other = calculate(_message("Timeout for bob: quota", "Timeout for %s: %s", "bob", "quota"))
    assert bob.components == ["message", "Failed for %s: %s"]
    assert bob.hash == ann.hash
    assert bob.hash != other.hash


def test_formatted_text_is_used_without_template() -> None:
    assert _components("Failed for bob") == ["message", "Failed for bob"]


def test_exception_takes_precedence_over_message() -> None:
    event = _message("Something happened")
    event["exception"] = {"values": [{"type": "ValueError"}]}
    assert calculate(event).components == ["exception", "ValueError"]


def test_message_and_exception_never_share_a_hash() -> None:
    message = calculate(_message("ValueError"))
    exception = calculate({"exception": {"values": [{"type": "ValueError"}]}})
    assert message.components[1:] == exception.components[1:]
    assert message.hash != exception.hash


@pytest.mark.parametrize("logentry", [None, {}, {"formatted": ""}, {"formatted": " \n\t"}, "text"])
def test_event_without_message_falls_back_to_level_and_logger(logentry: object) -> None:
    event = {"level": "warning", "logger": "shop.jobs", "logentry": logentry}
    grouping = calculate(event)
    assert grouping.components == ["fallback", "<unlabeled>", "warning", "shop.jobs"]
    assert grouping.hash != calculate({**event, "logger": "shop.web"}).hash
