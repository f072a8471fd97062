"""Secrets inside text: value patterns (cards, tokens, keys, URL passwords) and
``name=value`` pairs whose name is sensitive (query strings, forms, cookies, log lines,
JSON and source code held in a string).

Finding candidates is the costly part (Python's ``re`` tries every branch of an
alternation at every character): one Aho-Corasick pass finds the fixed part of every
rule at once (``FOLD``: lowercase letters, digits as ``0``), then only the rule of each
candidate is tried, anchored where the candidate is. The text is handled as UTF-8 bytes,
so offsets agree with the automaton's; every pattern is ASCII.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import ahocorasick_rs

from tracebox.privacy.keys import SAFE, KeyMatcher
from tracebox.privacy.rules import (
    AWS_ACCESS_KEY,
    BEARER_TOKEN,
    CREDIT_CARD,
    FILTERED,
    GITHUB_TOKEN,
    GITLAB_TOKEN,
    JWT,
    LINE_KEYS,
    PRIVATE_KEY,
    SENSITIVE_EXACT,
    SENSITIVE_WORDS,
    SLACK_TOKEN,
    TRACEBOX_TOKEN,
    URL_PASSWORD,
    normalize_key,
)
from tracebox.privacy.scan import NAME_FOLLOWS, SentPass, hyperscan_pass

MAX_KEY_CHARS = 64  # a name in name=value text is at most this long
# Texts whose result is remembered per project's rules: how many, and up to what length
# (names, header values and source lines; longer texts are rarely seen twice).
MAX_CACHED_TEXTS = 4096
MAX_CACHED_CHARS = 256
_FILTERED = FILTERED.encode()
# Lowercase ASCII letters and fold every digit to "0", in one pass (offsets unchanged).
FOLD = bytes(ord("0") if 48 <= b <= 57 else b + 32 if 65 <= b <= 90 else b for b in range(256))
_KEY_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.[]")
# A DFA scans about twice as fast as the default NFA with ~100 patterns (measured on the
# benchmark corpus, bench/privacy_bench.py); it costs some memory per project's rules.
_DFA = ahocorasick_rs.Implementation.DFA
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# What scrubbing a payload as sent (``BlobScrubber.sent_edits``) must also find in it: an
# escape, a log message's params, the two top-level fields that key rules skip. Matched
# after the rules' own patterns, by the same pass; none of them can overlap a rule's
# pattern in valid JSON (their quotes are a key's or a string's own).
SENT_MARKS = (b"\\u", b'"params"', b'"modules"', b'"sdk"')


@dataclass(frozen=True)
class _Kind:
    """A value pattern: the rule, the regex matched at the candidate, the group that is
    filtered (None: the whole match) and whether a word character may precede it."""

    rule: str
    pattern: re.Pattern[bytes]
    group: str | None = None
    boundary: bool = True
    # What follows the anchor wherever ``pattern`` matches, as a regex Hyperscan reads
    # (``scan.py``); None: the anchor alone is a candidate.
    follows: bytes | None = None


def _kind(
    rule: str,
    pattern: bytes,
    group: str | None = None,
    boundary: bool = True,
    follows: bytes | None = None,
) -> _Kind:
    return _Kind(rule, re.compile(pattern), group, boundary, follows)


_AWS_PREFIXES = (
    "AKIA",
    "ASIA",
    "ABIA",
    "ACCA",
    "AGPA",
    "AIDA",
    "AROA",
    "AIPA",
    "ANPA",
    "ANVA",
    "APKA",
)
_GITLAB_PREFIXES = ("pat", "dt", "rt", "ptt", "cbt", "ft", "imt", "oas", "soat", "agent", "ffct")
_PEM = _kind(PRIVATE_KEY, rb"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,20}-----")
_PEM_END = re.compile(rb"-----END[A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,20}-----")
# A URL's user, then its password before the "@": the pattern, and what follows its
# anchor ("://" or ":\/\/") for the pass as sent.
_URL_USER = rb"[^\s:@/?#\[\]\\]*:"
_URL_SECRET = rb"[^\s@/?#\\]+"
_URL = _kind(
    URL_PASSWORD,
    rb":(?://|\\/\\/)" + _URL_USER + rb"(?P<v>" + _URL_SECRET + rb")@",
    "v",
    boundary=False,
    follows=_URL_USER + _URL_SECRET + rb"@",
)
_BEARER = _kind(BEARER_TOKEN, rb"(?i:bearer)[ \t]+(?P<v>[A-Za-z0-9\-._~+/]{4,}=*)", "v")
_AWS = _kind(AWS_ACCESS_KEY, rb"(?:" + "|".join(_AWS_PREFIXES).encode() + rb")[A-Z0-9]{16}\b")
_SLACK = _kind(SLACK_TOKEN, rb"xox[abposre]-[A-Za-z0-9\-]{10,250}")
_SLACK_HOOK = _kind(
    SLACK_TOKEN,
    rb"hooks\.slack\.com(?:/|\\/)services(?:/|\\/)(?P<v>[A-Za-z0-9_/\\]{10,250})",
    "v",
    boundary=False,
)
_GITHUB = _kind(GITHUB_TOKEN, rb"(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})")
_GITLAB = _kind(
    GITLAB_TOKEN, rb"gl(?:" + "|".join(_GITLAB_PREFIXES).encode() + rb")-[A-Za-z0-9_\-]{20,255}"
)
_JWT = _kind(JWT, rb"eyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*")
_TBPAT = _kind(TRACEBOX_TOKEN, rb"tbpat-[A-Za-z0-9_\-]{20,}")
# 13-19 digits, run together or in the groups cards are printed in (4-4-4-4[-3], 4-6-5
# and 4-6-4), with a network's first digit; the Luhn check is done in Python.
_CARD = _kind(
    CREDIT_CARD,
    rb"(?:[2-6]\d{12,18}"
    rb"|[2-6]\d{3}(?P<s1>[ -])\d{4}(?P=s1)\d{4}(?P=s1)\d{4}(?:(?P=s1)\d{3})?"
    rb"|3\d{3}(?P<s2>[ -])\d{6}(?P=s2)\d{4,5})(?![0-9A-Za-z_])",
)
_WORD = None  # a sensitive name: decided by KeyMatcher and _VALUE, not by a pattern

# The fixed part of each value pattern, folded, and the patterns it starts.
_ANCHORS: dict[str, tuple[_Kind | None, ...]] = {
    "-----begin": (_PEM,),
    "://": (_URL,),
    ":\\/\\/": (_URL,),
    "bearer": (_BEARER, _WORD),
    "xox": (_SLACK,),
    "hooks.slack.com": (_SLACK_HOOK,),
    "github_pat_": (_GITHUB,),
    "eyj": (_JWT,),
    "tbpat-": (_TBPAT,),
    **{p.lower(): (_AWS,) for p in _AWS_PREFIXES},
    **{f"gh{c}_": (_GITHUB,) for c in "pousr"},
    **{f"gl{p}-": (_GITLAB,) for p in _GITLAB_PREFIXES},
    **{a: (_CARD,) for a in ("0" * 13, "0000 0000 0000 0", "0000-0000-0000-0")},
    **{a: (_CARD,) for a in ("0000 000000 0000", "0000-000000-0000")},
}
# The anchors of the patterns that need a non-word character before them (in JSON text, a
# letter right after an escape such as \u0026 is one: ``BlobScrubber.sent_edits``).
BOUNDED_ANCHORS = tuple(a.encode() for a, k in _ANCHORS.items() if any(x and x.boundary for x in k))
_SEPARATORS = ("", "_", "-", ".", " ")
_COMPOUNDS = {  # default words whose parts are often separated: api_key, api-key...
    "apikey": ("api", "key"),
    "accesskey": ("access", "key"),
    "privatekey": ("private", "key"),
    "creditcard": ("credit", "card"),
    "cardnumber": ("card", "number"),
}

# What follows a sensitive name: a quoted value (JSON, dict reprs, source code), a bare
# value right after "=" (query strings, forms, cookies), or the word after "name:" (log
# lines; "password: must be long" loses "must": a secret is worse to keep than a word).
_VALUE = re.compile(
    rb"""(?:\\?["'])?
    (?:
        [ \t]*(?:=>|:=|=|:)[ \t]*(?P<q>\\?["'])(?P<quoted>.{1,8192}?)(?P=q)
      | =(?P<bare>[^\s&;,"'<>(){}\[\]\\]{1,8192})
      | [ \t]*:[ \t]*(?P<line>[^\s"',;&]{1,8192})
    )""",
    re.VERBOSE,
)
_LINE = re.compile(rb"(?:\\?[\"'])?[ \t]*:[ \t]*(?P<rest>[^\r\n]{1,8192})")

Hit = tuple[int, int, str]  # start and end of the filtered span, rule


class TextScrubber:
    """``scrub(text)``: the text with every secret replaced by ``[Filtered]``, and the
    rules that did it (empty when nothing was found). ``candidates(data)`` is the
    automaton's pass alone, for callers that scan a whole JSON document."""

    def __init__(self, keys: KeyMatcher, *, defaults: bool) -> None:
        self.keys = keys
        # The strings decided on are mostly names and source lines that every event of an
        # error repeats: their result is kept (a pure function of the text).
        self._cache: dict[str, tuple[str, list[str]]] = {}
        kinds: dict[bytes, tuple[_Kind | None, ...]] = {}
        if defaults:
            kinds.update((a.encode(), k) for a, k in _ANCHORS.items())
            for word in SENSITIVE_WORDS:
                for form in _joined(_COMPOUNDS.get(word, (word,))):
                    kinds.setdefault(form.encode(), (_WORD,))
            for word in SENSITIVE_EXACT:  # whole names only: "otp" is in "footprint"
                kinds[f'"{word}"'.translate(_FOLD_STR).encode()] = (_WORD,)
                kinds[f"{word}=".translate(_FOLD_STR).encode()] = (_WORD,)
        for parts in keys.additional_parts:
            for form in _joined(parts):
                kinds.setdefault(form.encode().translate(FOLD), (_WORD,))
        self.patterns = list(kinds)
        self.kinds = [kinds[p] for p in self.patterns]
        # For a pattern that is only a sensitive name: where the name's end is looked for
        # from the candidate's start (as ``worth``); None for value patterns.
        self.name_tail = [
            len(p.strip(b'"=')) if kinds[p] == (_WORD,) else None for p in self.patterns
        ]
        self.automaton = (
            ahocorasick_rs.BytesAhoCorasick(self.patterns, implementation=_DFA)
            if self.patterns
            else None
        )
        self._sent: SentPass | None = None  # built when first used

    def candidates(self, data: bytes) -> list[tuple[int, int]]:
        """(start, pattern index) of every candidate in ``data``, in order."""
        return [(start, index) for index, start, _ in self.matches(data)]

    def matches(self, data: bytes) -> list[tuple[int, int, int]]:
        """The automaton's own (pattern index, start, end) of every candidate, in order
        (non-overlapping matches come left to right): no tuple is built again."""
        if self.automaton is None:
            return []
        return self.automaton.find_matches_as_indexes(data.translate(FOLD))

    def sent_matches(self, data: bytes) -> list[tuple[int, int, int]]:
        """``matches`` with ``SENT_MARKS`` too: a mark's index is ``len(patterns)`` plus
        its place in ``SENT_MARKS``. With Hyperscan (``scan.py``), a sensitive name not
        followed by what a name needs is left out, and matches may overlap."""
        if self._sent is None:
            follows = [
                NAME_FOLLOWS if tail == len(p) else _follows(kinds)
                for p, tail, kinds in zip(self.patterns, self.name_tail, self.kinds, strict=True)
            ]
            self._sent = hyperscan_pass(self.patterns, follows, SENT_MARKS)
            if self._sent is None:
                automaton = ahocorasick_rs.BytesAhoCorasick(
                    [*self.patterns, *SENT_MARKS], implementation=_DFA
                )
                self._sent = lambda data: automaton.find_matches_as_indexes(data.translate(FOLD))
        return self._sent(data)

    def worth(self, data: bytes, start: int, index: int) -> bool:
        """Whether a candidate in a JSON document can lead anywhere, judged on its bytes
        alone: a name that is an object key or a pair list's first item, or that is
        followed by what name=value text needs; a value pattern that matches. Cheap, so
        that most candidates (the word "session" in prose and code) cost no decoding."""
        for kind in self.kinds[index]:
            if kind is None:
                if _name_position(data, start, start + len(self.patterns[index].strip(b'"='))):
                    return True
            elif _value(kind, data, start, escaped=True) is not None:
                return True
        return False

    def scrub(self, text: str) -> tuple[str, list[str]]:
        if len(text) < 4 or self.automaton is None:
            return text, []
        if len(text) > MAX_CACHED_CHARS:
            return self._scrub(text)
        try:
            scrubbed, rules = self._cache[text]
        except KeyError:
            if len(self._cache) >= MAX_CACHED_TEXTS:
                self._cache.clear()
            scrubbed, rules = self._cache[text] = self._scrub(text)
        return scrubbed, list(rules)

    def _scrub(self, text: str) -> tuple[str, list[str]]:
        data = text.encode("utf-8", "surrogatepass")
        found = self.candidates(data)
        if not found:
            return text, []
        parts: list[bytes] = []
        rules: list[str] = []
        done = 0
        for start, index in found:
            if start < done:
                continue
            hit = self._decide(data, start, index, done)
            if hit is None:
                continue
            begin, end, rule = hit
            parts += (data[done:begin], _FILTERED)
            if rule not in rules:
                rules.append(rule)
            done = end
        if not rules:
            return text, []
        parts.append(data[done:])
        return b"".join(parts).decode("utf-8", "surrogatepass"), rules

    def _decide(self, data: bytes, start: int, index: int, done: int) -> Hit | None:
        for kind in self.kinds[index]:
            if kind is None:
                at = start + 1 if data[start] == 0x22 else start  # '"otp"': the quote
                hit = self._pair(data, at, at + len(self.patterns[index].strip(b'"=')), done)
            else:
                hit = _value(kind, data, start)
            if hit is not None:
                return hit
        return None

    def _pair(self, data: bytes, start: int, end: int, done: int) -> Hit | None:
        """The value after a sensitive name found at ``data[start:end]``."""
        low = max(done, start - MAX_KEY_CHARS)
        while start > low and data[start - 1] in _KEY_BYTES:
            start -= 1
        high = min(len(data), end + MAX_KEY_CHARS)
        while end < high and data[end] in _KEY_BYTES:
            end += 1
        name = data[start:end].decode("ascii")
        rule = self.keys.rule(name)
        if rule is None or rule == SAFE:
            return None
        if normalize_key(name) in LINE_KEYS:
            line = _LINE.match(data, end)
            if line is not None:
                return line.start("rest"), line.end("rest"), rule
        value = _VALUE.match(data, end)
        if value is None:
            return None
        group = next(g for g in ("quoted", "bare", "line") if value.group(g) is not None)
        return value.start(group), value.end(group), rule


_FOLD_STR = str.maketrans("0123456789", "0000000000")
_QUOTES = (0x5C, 0x27)  # a backslash (an escaped double quote inside a JSON string), "'"
JSON_BLANKS = b" \t\r\n"  # what JSON allows between its tokens


def _name_position(data: bytes, start: int, end: int) -> bool:
    """Whether the name around ``data[start:end]`` (a JSON document) is a key, a pair
    list's first item, or followed by ``=value``, ``= 'value'``, ``: value``..."""
    if data[start] == 0x22:
        start += 1
    high = min(len(data), end + MAX_KEY_CHARS)
    while end < high and data[end] in _KEY_BYTES:
        end += 1
    at = end
    while at < high and data[at] in (0x20, 0x09):
        at += 1
    char = data[at] if at < len(data) else 0
    if char == 0x22:  # the end of the JSON string: a key, or a pair's name
        after = at + 1
        while after < len(data) and data[after] in JSON_BLANKS:  # JSON's own, as an SDK sent it
            after += 1
        follows = data[after : after + 1]
        if follows == b":":
            return True
        before = data.rfind(b'"', 0, start) - 1  # before the opening quote
        while before > 0 and data[before] in JSON_BLANKS:
            before -= 1
        return follows == b"," and before >= 0 and data[before] == 0x5B
    if char in _QUOTES:  # 'name': ..., \"name\": ... (a quoted name in text)
        at += 2 if char == 0x5C else 1
        while at < high and data[at] in (0x20, 0x09):
            at += 1
        char = data[at] if at < len(data) else 0
        return char in (0x3D, 0x3A)
    if char in (0x3D, 0x3A):  # "=" or ":"
        after = at + 1
        if data[after : after + 1] in (b">", b"="):
            after += 1
        if char == 0x3D and at == end and data[after : after + 1] not in (b" ", b"\t", b""):
            return True  # name=value
        while after < high and data[after] in (0x20, 0x09):
            after += 1
        follows_char = data[after] if after < len(data) else 0
        return follows_char in _QUOTES or (char == 0x3A and follows_char not in (0x22, 0))
    return False


def _value(kind: _Kind, data: bytes, start: int, *, escaped: bool = False) -> Hit | None:
    """The pattern ``kind`` at ``start``. ``escaped``: ``data`` is JSON text, where a
    letter after a backslash (``\\n``) is a separator in the decoded string."""
    after_escape = escaped and start > 1 and data[start - 2] == 0x5C
    if kind.boundary and start > 0 and data[start - 1] in _WORD_BYTES and not after_escape:
        return None
    match = kind.pattern.match(data, start)
    if match is None:
        return None
    if kind is _PEM:
        end = _PEM_END.search(data, match.end())
        return match.end(), end.start() if end else len(data), PRIVATE_KEY
    if kind is _CARD and not is_card_number(match.group().decode()):
        return None
    if kind.group is None:
        return match.start(), match.end(), kind.rule
    return match.start(kind.group), match.end(kind.group), kind.rule


def _follows(kinds: tuple[_Kind | None, ...]) -> bytes | None:
    """What follows a value pattern's anchor, for the pass as sent: only when the anchor
    starts that one pattern (a name, or another pattern, could follow it otherwise)."""
    if len(kinds) != 1 or kinds[0] is None:
        return None
    return kinds[0].follows


def _joined(parts: tuple[str, ...]) -> list[str]:
    """A name's words joined by every separator (one word: itself)."""
    return [sep.join(parts) for sep in _SEPARATORS] if len(parts) > 1 else list(parts)


def is_card_number(text: str) -> bool:
    """13-19 digits (separators ignored) with a card network's first digit that pass the
    Luhn check."""
    digits = [int(c) for c in text if c.isdigit()]
    if not 13 <= len(digits) <= 19 or digits[0] not in (2, 3, 4, 5, 6):
        return False
    return luhn_valid(digits)


def luhn_valid(digits: Iterable[int]) -> bool:
    total = 0
    for position, digit in enumerate(reversed(list(digits))):
        if position % 2:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0
