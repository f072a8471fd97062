"""Scrubbing whole events: every kind of secret in every field, the settings, IP handling,
the remarks the details page reads, and grouping."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from tests.privacy import secrets as s
from tracebox import grouping, privacy
from tracebox.privacy import FILTERED, IpMode, PrivacySettings, read_remarks
from tracebox.protocol.event import normalize_event, summarize


def normalized(raw: dict[str, Any] | None = None, client_ip: str | None = None) -> dict[str, Any]:
    return normalize_event(raw or s.raw_event(), received_at=1_700_000_000.0, client_ip=client_ip)


def scrubbed(settings: PrivacySettings | None = None, **kw: Any) -> dict[str, Any]:
    return privacy.scrub(normalized(**kw), settings or PrivacySettings())


def text_of(event: dict[str, Any]) -> str:
    return orjson.dumps(event).decode()


def test_no_secret_survives_the_default_rules() -> None:
    out = text_of(scrubbed())
    assert [secret for secret in s.ALL if secret in out] == []
    for kept in ("checkout", "shop.example.com", "PaymentError", "charge", "bob"):
        assert kept in out


def test_the_input_event_is_not_changed() -> None:
    event = normalized()
    before = copy.deepcopy(event)
    privacy.scrub(event, PrivacySettings(ip_mode=IpMode.DROP, drop_user_ip=True))
    assert event == before


def test_what_an_error_shows_is_scrubbed() -> None:
    summary = summarize(scrubbed())
    assert summary.title == "PaymentError: card [Filtered] declined for Bearer [Filtered]"
    assert s.CARD not in (summary.value or "")
    assert "token=[Filtered]" in (
        summarize(scrubbed(raw={"message": "x", **_url_only()})).culprit or ""
    )


def _url_only() -> dict[str, Any]:
    return {"request": {"url": f"https://shop.example.com/pay?token={s.TBPAT}"}}


def test_every_filtered_value_names_its_rule() -> None:
    event = scrubbed()
    remarks = read_remarks(event)
    unexplained = [
        (key, value)
        for key, value in _strings(event)
        if FILTERED in value and not remarks.rules_for(value, key)
    ]
    assert unexplained == []
    assert {"sensitive-key", "credit-card", "bearer-token", "jwt"} <= set(remarks.rules())


def _strings(value: Any, key: object = None) -> list[tuple[object, str]]:
    """(key, string) for every string in ``value``; pair lists give their name as key."""
    if isinstance(value, str):
        return [(key, value)]
    if isinstance(value, dict):
        return [item for k, v in value.items() if k != "_scrubbed" for item in _strings(v, k)]
    if isinstance(value, list):
        if len(value) == 2 and isinstance(value[0], str):
            return [(None, value[0]), *_strings(value[1], value[0])]
        return [item for v in value for item in _strings(v)]
    return []


def test_a_log_message_and_its_params_are_both_filtered() -> None:
    event = scrubbed()
    assert event["logentry"]["formatted"] == "login failed password=[Filtered]"
    assert event["logentry"]["params"] == [FILTERED]
    raw = {"logentry": {"message": "hello %(password)s", "params": {"password": s.PASSWORD}}}
    event = scrubbed(raw=raw)
    assert event["logentry"]["params"] == {"password": FILTERED}
    assert event["logentry"]["formatted"] == "hello [Filtered]"


def test_a_remembered_secret_is_filtered_in_strings_and_left_in_numbers() -> None:
    # A filtered password is remembered and filtered wherever else it appears. All digits,
    # it also matched a bare number, and the scrubber raised on the JSON it would make.
    raw = {
        "message": "x",
        "extra": {"password": "123456789012", "order_id": 123456789012, "ref": "#123456789012"},
    }
    event = scrubbed(raw=raw)
    assert event["extra"] == {"password": FILTERED, "order_id": 123456789012, "ref": "#[Filtered]"}


def test_safe_fields_are_never_scrubbed() -> None:
    event = scrubbed(PrivacySettings(safe_fields=("card_number", "X-Api-Key")))
    assert event["extra"]["order"]["card_number"] == s.CARD_DIGITS
    assert ["X-Api-Key", s.API_KEY] in event["request"]["headers"]
    assert event["extra"]["password"] == FILTERED


def test_additional_sensitive_fields() -> None:
    raw = {"message": "x", "extra": {"order_ref": "A-1", "orderRef": "A-2", "other": "A-3"}}
    event = scrubbed(PrivacySettings(sensitive_fields=("order_ref",)), raw=raw)
    assert event["extra"] == {"order_ref": FILTERED, "orderRef": FILTERED, "other": "A-3"}
    assert read_remarks(event).rules_for(FILTERED, "order_ref") == ("additional-field",)


def test_scrubbing_off_stores_what_was_sent() -> None:
    event = scrubbed(PrivacySettings(scrub_data=False))
    assert event["extra"]["password"] == s.PASSWORD
    assert "_scrubbed" not in event


def test_modules_are_package_versions_not_secrets() -> None:
    event = scrubbed(raw={"message": "x", "modules": {"authlib": "1.3.0", "x": s.GITHUB}})
    assert event["modules"] == {"authlib": "1.3.0", "x": FILTERED}


@pytest.mark.parametrize(
    ("mode", "drop_user_ip", "user_ip", "env_ip", "forwarded"),
    [
        (IpMode.STORE, False, "203.0.113.9", "203.0.113.9", "203.0.113.7, 2001:db8:1:2::9"),
        (IpMode.ANONYMIZE, False, "203.0.113.0", "203.0.113.0", "203.0.113.0, 2001:db8:1::"),
        (IpMode.DROP, False, None, None, None),
        (IpMode.STORE, True, None, "203.0.113.9", "203.0.113.7, 2001:db8:1:2::9"),
    ],
)
def test_ip_handling(
    mode: IpMode, drop_user_ip: bool, user_ip: str | None, env_ip: str | None, forwarded: str | None
) -> None:
    raw = {
        "message": "x",
        "user": {"id": "1", "ip_address": "{{auto}}"},
        "request": {
            "env": {"REMOTE_ADDR": "203.0.113.9"},
            "headers": [["X-Forwarded-For", "203.0.113.7, 2001:db8:1:2::9"], ["Accept", "*/*"]],
        },
    }
    settings = PrivacySettings(ip_mode=mode, drop_user_ip=drop_user_ip)
    event = scrubbed(settings, raw=raw, client_ip="203.0.113.9")
    assert event["user"].get("ip_address") == user_ip
    assert event["request"]["env"].get("REMOTE_ADDR") == env_ip
    headers = dict(event["request"]["headers"])
    assert headers.get("X-Forwarded-For") == forwarded
    assert headers["Accept"] == "*/*"
    if mode is not IpMode.STORE or drop_user_ip:
        assert read_remarks(event).fields


def test_an_ipv6_user_address_is_anonymised_to_48_bits() -> None:
    raw = {"message": "x", "user": {"ip_address": "2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff"}}
    event = scrubbed(PrivacySettings(ip_mode=IpMode.ANONYMIZE), raw=raw)
    assert event["user"]["ip_address"] == "2001:db8:aaaa::"
    assert summarize(event).user_key == "ip:2001:db8:aaaa::"


def test_a_dropped_ip_does_not_count_users() -> None:
    raw = {"message": "x", "user": {"ip_address": "203.0.113.9"}}
    event = scrubbed(PrivacySettings(ip_mode=IpMode.DROP), raw=raw)
    assert "user" not in event or "ip_address" not in event["user"]
    assert summarize(event).user_key is None


@pytest.mark.parametrize(
    "make",
    [
        lambda secret: {"exception": {"values": [{"type": "E", "value": f"password={secret}"}]}},
        lambda secret: {"message": f"auth failed: Authorization: Bearer {secret}"},
        lambda secret: {"message": f"push refused for ghp_{secret}abcdefghijklmnopqrstuvw"},
        lambda secret: {"message": "x", "fingerprint": ["login", f"token={secret}"]},
    ],
)
def test_two_events_differing_only_in_a_secret_group_together(make: Any) -> None:
    one, two = (normalized(make(secret)) for secret in ("zqFirstSecret1", "zqOtherSecret2"))
    assert grouping.calculate(one).hash != grouping.calculate(two).hash  # the test can fail
    first, second = (grouping.calculate(privacy.scrub(e)) for e in (one, two))
    assert first.hash == second.hash
    assert "zqFirstSecret1" not in orjson.dumps(first.components).decode()


def test_events_of_different_errors_stay_apart() -> None:
    one = normalized({"exception": {"values": [{"type": "E", "value": "password=a in cart"}]}})
    two = normalized({"exception": {"values": [{"type": "E", "value": "password=a in order"}]}})
    assert (
        grouping.calculate(privacy.scrub(one)).hash != grouping.calculate(privacy.scrub(two)).hash
    )
