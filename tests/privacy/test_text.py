"""The text rules one by one: what each filters, and what it must leave alone."""

from __future__ import annotations

import pytest

from tests.privacy import secrets as s
from tracebox.privacy import PrivacySettings
from tracebox.privacy.keys import KeyMatcher
from tracebox.privacy.text import TextScrubber, is_card_number


def scrubber(settings: PrivacySettings | None = None) -> TextScrubber:
    settings = settings or PrivacySettings()
    return TextScrubber(KeyMatcher(settings), defaults=settings.scrub_data)


@pytest.mark.parametrize("kind", sorted(s.TEXTS))
def test_every_value_pattern_is_filtered_in_text(kind: str) -> None:
    text, rules = scrubber().scrub(s.TEXTS[kind])
    assert s.VALUE_SECRETS[kind] not in text
    assert "[Filtered]" in text
    assert rules


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://x.com/a?token=abc&b=1", "https://x.com/a?token=[Filtered]&b=1"),
        ("user=bob&password=hunter2", "user=bob&password=[Filtered]"),
        ("sessionid=abc; theme=dark", "sessionid=[Filtered]; theme=dark"),
        ('{"password": "x1", "user": "bob"}', '{"password": "[Filtered]", "user": "bob"}'),
        ("{'api_key': 'k1'}", "{'api_key': '[Filtered]'}"),
        ('API_KEY = "sk_live_1"', 'API_KEY = "[Filtered]"'),
        ("password: hunter2", "password: [Filtered]"),
        ("login password: hunter2 for bob", "login password: [Filtered] for bob"),
        ("Authorization: Basic dXNlcjpwYXNz\nHost: x", "Authorization: [Filtered]\nHost: x"),
        ("Cookie: a=b; c=d", "Cookie: [Filtered]"),
        ("x-api-key=abc", "x-api-key=[Filtered]"),
        ("apiKey=abc", "apiKey=[Filtered]"),
        ("pin=1234", "pin=[Filtered]"),
        ('{\\"secret\\": \\"v\\"}', '{\\"secret\\": \\"[Filtered]\\"}'),
    ],
)
def test_sensitive_names_in_text(text: str, expected: str) -> None:
    assert scrubber().scrub(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "password reset failed for bob",  # the word alone says nothing secret
        "token = self.parse_token(raw)",  # code: a name, not a value
        "if not session.active:",
        "author=bob",
        "spinner=3",
        "footprint=2",
        "https://public@errors.example.com/42",  # a DSN without secret
        "https://host:8080/path",
        "order 1234567890123 shipped",  # 13 digits, not a card number (Luhn)
        "ts 1732254000123",  # a millisecond timestamp
        "4111 1111 1111 1112",  # one digit off: fails Luhn
        "Basic information",
        "eyJ alone",
    ],
)
def test_text_without_secrets_is_kept(text: str) -> None:
    assert scrubber().scrub(text) == (text, [])


def test_card_numbers_need_luhn_and_a_network_prefix() -> None:
    assert is_card_number("4111111111111111")
    assert is_card_number("378282246310005")
    assert not is_card_number("4111111111111112")
    assert not is_card_number("1111111111111117")  # Luhn-valid, no network starts with 1
    assert not is_card_number("411111111111")  # 12 digits


def test_pem_block_cut_short_is_filtered_to_the_end() -> None:
    text, _ = scrubber().scrub("-----BEGIN PRIVATE KEY-----\nMIIabc" + "x" * 100)
    assert text == "-----BEGIN PRIVATE KEY-----[Filtered]"


def test_non_ascii_text_keeps_its_characters() -> None:
    text, _ = scrubber().scrub(f"Zahlung für Karte {s.CARD} — abgelehnt ✓ token=é1")
    assert text == "Zahlung für Karte [Filtered] — abgelehnt ✓ token=[Filtered]"


def test_additional_fields_match_any_separator_and_case() -> None:
    text_scrubber = scrubber(PrivacySettings(sensitive_fields=("my_sekret",)))
    for name in ("my_sekret", "mySekret", "MY-SEKRET", "my.sekret", "mysekret"):
        assert text_scrubber.scrub(f"{name}=abc") == (f"{name}=[Filtered]", ["additional-field"])


def test_safe_fields_are_kept_in_text() -> None:
    text_scrubber = scrubber(PrivacySettings(safe_fields=("csrf_token",)))
    assert text_scrubber.scrub("csrf_token=abc&password=x")[0] == (
        "csrf_token=abc&password=[Filtered]"
    )


def test_scrubbing_off_keeps_everything() -> None:
    off = scrubber(PrivacySettings(scrub_data=False, sensitive_fields=("x_id",)))
    for text in [*s.TEXTS.values(), "password=x", "x_id=1"]:
        assert off.scrub(text) == (text, [])
