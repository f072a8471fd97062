"""Validation of the two lists of field names, at their bounds and past them."""

from __future__ import annotations

import pytest

from tracebox.privacy import InvalidSetting
from tracebox.privacy.keys import KeyMatcher, name_parts
from tracebox.privacy.settings import (
    MAX_FIELD_NAME_CHARS,
    MAX_FIELD_NAMES,
    PrivacySettings,
    field_names,
    names_from_text,
)


def test_names_are_stripped_deduplicated_and_blank_lines_skipped() -> None:
    text = " api_key \n\nApiKey, order-ref\norder_ref\n"
    assert names_from_text(text, "safe_fields") == ("api_key", "order-ref")


def test_at_the_bounds() -> None:
    names = [f"field_{i}" for i in range(MAX_FIELD_NAMES)]
    assert len(field_names(names, "x")) == MAX_FIELD_NAMES
    assert field_names(["a" * MAX_FIELD_NAME_CHARS], "x") == ("a" * MAX_FIELD_NAME_CHARS,)


def test_past_the_bounds() -> None:
    with pytest.raises(InvalidSetting, match="at most 100"):
        field_names([f"field_{i}" for i in range(MAX_FIELD_NAMES + 1)], "sensitive_fields")
    with pytest.raises(InvalidSetting, match="longer than 100"):
        field_names(["a" * (MAX_FIELD_NAME_CHARS + 1)], "safe_fields")


@pytest.mark.parametrize("name", ["x", "-_-", "a\x00b"])
def test_names_that_would_match_everything_or_nothing(name: str) -> None:
    with pytest.raises(InvalidSetting):
        field_names([name], "sensitive_fields")


def test_name_parts_split_separators_and_camel_case() -> None:
    assert name_parts("my_Sekret") == ("my", "sekret")
    assert name_parts("orderRef") == ("order", "ref")
    assert name_parts("X-Api-Key") == ("x", "api", "key")


def test_key_matcher_verdicts() -> None:
    keys = KeyMatcher(PrivacySettings(sensitive_fields=("orderRef",), safe_fields=("csrf",)))
    assert keys.rule("Order_Ref_Id") == "additional-field"
    assert keys.rule("X-CSRF") == "sensitive-key"  # safe fields match whole names
    assert keys.rule("csrf") == "safe"
    assert keys.rule("Authorization") == "sensitive-key"
    assert keys.rule("author") is None
    assert keys.rule("otp") == "sensitive-key"
    assert keys.rule("footprint") is None
