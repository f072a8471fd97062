"""Scrubbing a payload as the SDK sent it (``privacy.scrub_sent``), before it is parsed
and normalized: the same event as scrubbing the normalized event, whatever the JSON's
blanks, or a refusal (None) where it could differ, so that the digest scrubs the
normalized event instead."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.privacy.test_properties import EVERY_OPTION, event, event_learning_nothing
from tracebox import privacy
from tracebox.digest.config import ProjectConfig
from tracebox.digest.prepare import Preparer, read_records
from tracebox.privacy import FILTERED, PrivacySettings
from tracebox.protocol.event import normalize_event
from tracebox.spool import RecordKind, SpoolRecord
from tracebox.store.payloads import decode

ID = "a" * 32
# Every option, with additional names normalization does not read (see below for one it
# does: "user").
OPTIONS = PrivacySettings(
    ip_mode=privacy.IpMode.ANONYMIZE,
    safe_fields=("session", "request"),
    sensitive_fields=("x_note", "customer"),
)
IP = "203.0.113.7"
SECRET = "zq41secretVALUE9"

# The ways SDKs write JSON: compact (JavaScript, Go, Java, PHP), Python's json module with
# its default blanks, pretty-printed, and blanks before a key's ":" too.
WRITERS: dict[str, Callable[[Any], bytes]] = {
    "compact": orjson.dumps,
    "python": lambda raw: json.dumps(raw).encode(),
    "indented": lambda raw: json.dumps(raw, indent=2).encode(),
    "loose": lambda raw: json.dumps(raw, indent="\t", separators=(" , ", " : ")).encode(),
}


def after_normalizing(raw: dict[str, Any], rules: PrivacySettings) -> dict[str, Any]:
    normalized = normalize_event(raw, received_at=1.0, client_ip=IP, event_id=ID)
    return privacy.scrub(normalized, rules)


def same(a: dict[str, Any] | None, b: dict[str, Any]) -> bool:
    """Equal events; the rules that filtered a string may be listed in another order (the
    payload's fields come in the SDK's order, the normalized event's in its own)."""

    def canonical(event: dict[str, Any]) -> dict[str, Any]:
        remarks = event.get("_scrubbed", {})
        text = {k: sorted(v) for k, v in remarks.get("text", {}).items()}
        return {**event, "_scrubbed": {**remarks, "text": text}}

    return a is not None and canonical(a) == canonical(b)


def as_sent(payload: bytes, rules: PrivacySettings) -> dict[str, Any] | None:
    sent = privacy.scrub_sent(payload, rules)
    if sent is None:
        return None
    raw = orjson.loads(sent.payload)
    assert sent.fits(raw)
    return sent.finish(normalize_event(raw, received_at=1.0, client_ip=IP, event_id=ID))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    event(),
    st.sampled_from(sorted(WRITERS)),
    st.sampled_from([PrivacySettings(), OPTIONS]),
)
def test_scrubbing_as_sent_gives_the_event_scrubbing_after_normalizing_gives(
    case: tuple[dict[str, Any], list[str]], writer: str, rules: PrivacySettings
) -> None:
    raw, planted = case
    fast = as_sent(WRITERS[writer](raw), rules)
    assert fast is not None  # no escape, no log params: never refused
    assert same(fast, after_normalizing(raw, rules))  # remarks included
    if rules == PrivacySettings():  # (OPTIONS keeps the safe fields' secrets)
        out = orjson.dumps(fast).decode()
        assert [secret for secret in planted if secret in out] == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event_learning_nothing(), st.sampled_from(sorted(WRITERS)))
def test_modules_keep_their_names_as_sent_too(raw: dict[str, Any], writer: str) -> None:
    fast = as_sent(WRITERS[writer](raw), OPTIONS)
    if fast is None:  # refused, as it must be when a nested key is named like a skipped
        # field: which of the two is the top-level one is known only once it is parsed
        assert {"modules", "sdk"} & set(raw["extra"])
        return
    assert same(fast, after_normalizing(raw, OPTIONS))


def test_a_secret_only_the_payload_holds_is_filtered_too() -> None:
    """Normalization keeps a tag's first 200 characters: the secret past them is not in
    the normalized event, but its name is, and the value is filtered whole as sent."""
    raw = {"tags": {"x" * 190 + "_password": SECRET}, "extra": {"note": f"token={SECRET}"}}
    fast = as_sent(orjson.dumps(raw), PrivacySettings())
    assert fast is not None
    assert SECRET not in orjson.dumps(fast).decode()


@pytest.mark.parametrize(
    ("payload", "why"),
    [
        (b'{"extra":{"pass\\u0077ord":"' + SECRET.encode() + b'"}}', "an escaped letter"),
        (b'{"message":"\\u00e9ghp_' + b"a" * 36 + b'"}', "an escape before a token"),
        (b'{"message":"a\\u0026ghp_' + b"a" * 36 + b'"}', "Go's '&' before a token"),
        (b'{"message":"a\\u0026 4111 1111 1111 1111"}', "Go's '&' before a card"),
        (b'{"logentry":{"message":"login %s","params":["x"]}}', "log params"),
        (b'{"sdk":{"name":"a"},"extra":{"sdk":{"name":"b"}}}', "a skipped field twice"),
    ],
)
def test_what_could_differ_is_refused(payload: bytes, why: str) -> None:
    assert privacy.scrub_sent(payload, PrivacySettings()) is None, why


def test_gos_html_escapes_are_read_as_sent() -> None:
    """Go's encoder writes "&" as \\u0026: a query string's secret is still found."""
    payload = b'{"request":{"url":"https://x.test/p?a=1\\u0026token=' + SECRET.encode() + b'"}}'
    fast = as_sent(payload, PrivacySettings())
    assert fast is not None
    assert fast["request"]["url"] == f"https://x.test/p?a=1&token={FILTERED}"


def test_a_nested_field_named_like_a_skipped_one_does_not_fit() -> None:
    """``"modules":`` once, but not at the top level: key rules were skipped inside it,
    so the payload does not fit, and the digest scrubs the normalized event."""
    payload = orjson.dumps({"extra": {"modules": {"password": SECRET}}})
    sent = privacy.scrub_sent(payload, PrivacySettings())
    assert sent is not None
    assert not sent.fits(orjson.loads(sent.payload))


def test_an_additional_name_that_could_hide_a_mark_is_refused() -> None:
    assert privacy.scrub_sent(b'{"modules":{}}', PrivacySettings(sensitive_fields=("mod",))) is None
    assert privacy.scrub_sent(b'{"modules":{}}', PrivacySettings(sensitive_fields=("x_note",)))


def test_an_additional_name_that_normalization_reads_is_refused() -> None:
    """Filtered before normalization, ``"user": "[Filtered]"`` would be dropped (a user
    is an object); filtered after it, it is shown filtered."""
    assert privacy.scrub_sent(b'{"user":{"id":"1"}}', EVERY_OPTION) is None
    assert "user" in EVERY_OPTION.sensitive_fields


def prepared(raw: bytes, rules: PrivacySettings | None = None) -> dict[str, Any]:
    config = ProjectConfig(project_id=1, version=0, privacy=rules or PrivacySettings())
    record = SpoolRecord(RecordKind.EVENT, 1, 1, time.time(), raw, IP, ID).encode()
    batch = Preparer().prepare(read_records([record]), {1: config})
    [event] = batch.events
    return decode(event.payload)


@pytest.mark.parametrize(
    "payload",
    [
        b'{"extra":{"pass\\u0077ord":"' + SECRET.encode() + b'"}}',  # refused: as normalized
        b'{"extra":{"password" : "' + SECRET.encode() + b'"}}',  # as sent
        b'{"extra":{"modules":{"password":"' + SECRET.encode() + b'"}}}',  # does not fit
    ],
)
def test_the_digest_scrubs_every_payload_one_way_or_the_other(payload: bytes) -> None:
    stored = prepared(payload)
    assert SECRET not in orjson.dumps(stored).decode()
    assert "_scrubbed" in stored


def test_a_payload_cut_or_garbled_anywhere_is_refused_or_scrubbed() -> None:
    """Scrubbing as sent expects JSON; whatever else it gets, it never raises."""
    payload = orjson.dumps(
        {
            "extra": {"password": SECRET, "note": 'say "hi" token=abc', "n": 4111111111111111},
            "request": {"headers": [["Cookie", "a=b"]], "url": "https://u:p@x.test/"},
            "sdk": {"name": "x", "packages": [{"name": "a"}]},
            "modules": {"authlib": "1"},
        }
    )
    for cut in range(len(payload)):
        privacy.scrub_sent(payload[:cut])
    for at in range(len(payload)):
        for byte in b'"\\{}[]:, 0':
            privacy.scrub_sent(payload[:at] + bytes([byte]) + payload[at + 1 :])


def test_a_payload_that_is_not_json_is_still_set_aside_as_such() -> None:
    for payload, reason in (
        (b'{"password": "x"', "invalid_json"),
        (b'{"extra":{"password":"zq41', "invalid_json"),  # the scrubber finds no string end
        (b'["password"]', "not_an_object"),
    ):
        record = SpoolRecord(RecordKind.EVENT, 1, 1, time.time(), payload, IP, ID).encode()
        config = ProjectConfig(project_id=1, version=0)
        batch = Preparer().prepare(read_records([record]), {1: config})
        assert dict(batch.invalid) == {f"event_{reason}": 1}


def test_a_scrub_as_sent_that_broke_the_json_loses_nothing(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Were scrubbing as sent ever to break a valid payload (a bug), the digest would say
    so and scrub the event once normalized: stored, and scrubbed."""

    def broken(payload: bytes, rules: PrivacySettings) -> privacy.Sent | None:
        sent = privacy.scrubber_for(rules).scrub_sent(payload)
        assert sent is not None
        sent.payload = sent.payload[:-1]
        return sent

    monkeypatch.setattr("tracebox.digest.prepare.privacy.scrub_sent", broken)
    stored = prepared(b'{"extra":{"password":"' + SECRET.encode() + b'"}}')
    assert stored["extra"] == {"password": FILTERED}
    assert "broke its JSON" in caplog.text


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.text('ab"\\\\ 4', max_size=8), st.integers(0, 99)), max_size=12))
def test_the_quotes_before_an_offset_are_counted_from_the_last_one_asked(values: list[Any]) -> None:
    """``_Strings`` counts the quotes before each offset from the one asked before it; every
    answer is the one a count from the start of the document gives."""
    from tracebox.privacy.blob import _quote_before, _Strings

    blob = orjson.dumps(values)
    inside = [False] * len(blob)
    opening = -1
    at = 0
    while at < len(blob):  # a plain walk: which offsets are inside which string
        if opening >= 0 and blob[at] == 0x5C:
            inside[at] = inside[at + 1] = True
            at += 2
            continue
        if blob[at] == 0x22:
            opening = at if opening < 0 else -1
        elif opening >= 0:
            inside[at] = True
        at += 1
    strings = _Strings(blob)
    for pos in (p for p in range(1, len(blob)) if blob[p] != 0x22):  # asked at digits
        expected = _quote_before(blob, pos) if inside[pos] else None
        assert strings.opening(pos) == expected, (blob, pos)
