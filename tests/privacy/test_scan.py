"""The pass over a payload as sent with Hyperscan (``privacy/scan.py``): it leaves out a
sensitive word only where ``blob._NAME_TAIL`` (or a value pattern) rules it out, so the
scrubbing comes out the same as with the automaton, which stands in without Hyperscan."""

from __future__ import annotations

import threading
from typing import Any

import hyperscan
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.privacy.test_properties import event
from tests.privacy.test_sent import OPTIONS, WRITERS
from tracebox.privacy import PrivacySettings, scan
from tracebox.privacy.blob import _NAME_TAIL
from tracebox.privacy.scrubber import Scrubber
from tracebox.privacy.text import _URL, SENT_MARKS


def scrubbers(rules: PrivacySettings) -> tuple[Scrubber, Scrubber]:
    """The same rules twice: the pass as sent with Hyperscan (as the prepare process
    builds it), and with the automaton (any other process)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scan, "_hyperscan", hyperscan)
        fast = Scrubber(rules)
        fast.blob.text.sent_matches(b"{}")  # its pass is built now, with Hyperscan
        patch.setattr(scan, "_hyperscan", None)  # whatever this process turned on before
        automaton = Scrubber(rules)
        automaton.blob.text.sent_matches(b"{}")
    assert isinstance(fast.blob.text._sent, scan._Pass)
    assert not isinstance(automaton.blob.text._sent, scan._Pass)
    return fast, automaton


PAIRS = {rules: scrubbers(rules) for rules in (PrivacySettings(), OPTIONS)}
TEXT = PAIRS[PrivacySettings()][0].blob.text
# The patterns that are a name alone, each with NAME_FOLLOWS after it in the pass.
NAMES = [
    i
    for i, (p, tail) in enumerate(zip(TEXT.patterns, TEXT.name_tail, strict=True))
    if tail == len(p)
]
URLS = [i for i, kinds in enumerate(TEXT.kinds) if kinds == (_URL,)]

# What may follow a name: its characters, blanks, every branch's first characters, and
# what JSON puts around them.
AFTER = st.text(alphabet="aZ9_-.[] \t\r\n\"'\\=:>,{}@/x", max_size=24)


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(NAMES), AFTER, st.sampled_from(["", '"', " ", "x_", "["]))
def test_a_name_the_tail_accepts_is_a_candidate(index: int, after: str, before: str) -> None:
    data = (before + TEXT.patterns[index].decode() + after).encode()
    start = len(before)
    if _NAME_TAIL.match(data, start + len(TEXT.patterns[index])) is not None:
        assert (index, start) in {(i, s) for i, s, _ in TEXT.sent_matches(data)}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(URLS), st.text(alphabet="ab9:/@?#[]\\ .", max_size=20))
def test_a_url_with_a_password_is_a_candidate(index: int, after: str) -> None:
    data = TEXT.patterns[index] + after.encode()
    if _URL.pattern.match(data, 0) is not None:
        assert (index, 0) in {(i, s) for i, s, _ in TEXT.sent_matches(data)}


def test_words_in_code_and_file_names_are_left_out() -> None:
    data = (
        b'{"filename":"requests/sessions.py","abs_path":"/srv/requests/sessions.py",'
        b'"context_line":"    session = requests.Session()","vars":{"session_id":"zq1"},'
        b'"headers":[["Cookie","a=b"]],"url":"https://u:zq2@h/x","marks":"\\u0041"}'
    )
    found = [(TEXT.patterns + list(SENT_MARKS))[i] for i, _, _ in TEXT.sent_matches(data)]
    assert found == [b"session", b"cookie", b"://", b"\\u"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event(), st.sampled_from(sorted(WRITERS)), st.sampled_from(sorted(PAIRS, key=repr)))
def test_both_passes_scrub_a_payload_alike(
    case: tuple[dict[str, Any], list[str]], writer: str, rules: PrivacySettings
) -> None:
    payload = WRITERS[writer](case[0])
    fast, automaton = (s.scrub_sent(payload) for s in PAIRS[rules])
    assert (fast is None) == (automaton is None)
    if fast is not None and automaton is not None:
        assert fast.payload == automaton.payload
        assert fast.remarks.as_json() == automaton.remarks.as_json()
        assert fast.unkeyed == automaton.unkeyed


def test_threads_scan_with_a_scratch_space_each() -> None:
    data = b'{"password":"zq1","x":"token=zq2","y":"' + b"session " * 2000 + b'"}'
    expected = TEXT.sent_matches(data)
    results: list[object] = []

    def scan_often() -> None:
        try:
            results.extend(TEXT.sent_matches(data) == expected for _ in range(50))
        except Exception as e:
            results.append(e)

    threads = [threading.Thread(target=scan_often) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert results == [True] * 200


def test_use_hyperscan_loads_it_for_the_passes_built_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scan, "_hyperscan", None)
    before = Scrubber(PrivacySettings())
    before.blob.text.sent_matches(b"{}")  # its pass is built on first use
    assert scan.use_hyperscan()
    after = Scrubber(PrivacySettings())
    after.blob.text.sent_matches(b"{}")
    assert not isinstance(before.blob.text._sent, scan._Pass)
    assert isinstance(after.blob.text._sent, scan._Pass)


def test_patterns_hyperscan_refuses_leave_the_automaton(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(scan, "_hyperscan", hyperscan)
    assert scan.hyperscan_pass([b"token"], [b"(?<=x)"], SENT_MARKS) is None  # no look-behind
    assert "Hyperscan refused the patterns" in caplog.text
    assert scan.hyperscan_pass([b"token"], [None], SENT_MARKS) is not None
