"""Scrubbing an event in its JSON form, touching only the strings that may hold a secret.

A Python walk over every value of an event costs far more than the rest of the digest
(a 13 KB event holds some 1,700 strings), so the event is scrubbed as JSON text instead:

1. one Aho-Corasick pass over the text (``TextScrubber.candidates``) finds every place
   where a rule could apply: a sensitive word, a value pattern's fixed part
   (``-----begin``, ``://``, ``bearer``, ``ghp_``...), a run of 13 digits;
2. for each such place, the JSON string it is in is decoded and decided on: an object key
   or a pair-list name (``["Cookie", "..."]``) has its value replaced when the name is
   sensitive (or kept whole when it is a safe field); any other string goes through the
   text rules (``text.TextScrubber``) and is re-encoded if they changed it;
3. the edits are spliced into the text, left to right, never inside an edit already made.

Everything outside those strings is copied as it is. The JSON must be valid (it is
always the output of ``orjson.dumps`` or an SDK payload that parsed).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import orjson

from tracebox.privacy.keys import SAFE, KeyMatcher
from tracebox.privacy.rules import CREDIT_CARD, FILTERED
from tracebox.privacy.text import (
    BOUNDED_ANCHORS,
    FOLD,
    JSON_BLANKS,
    SENT_MARKS,
    TextScrubber,
    is_card_number,
)

_FILTERED_JSON = orjson.dumps(FILTERED)
_NUMBER_END = re.compile(rb"[^\s,\]}]*")
_STRUCTURE = re.compile(rb'[\[\]{}"]')
# What must follow a sensitive word for it to be a name (``text._name_position``): more
# name characters and blanks, then '":' or '",' (a key, a pair's name), a quote and "="
# or ":" ('name': ..., \\"name\\": ...), "=" and a value or a quote (name=value,
# name = 'value'), or ":". A necessary condition, checked first because it is one C call.
# What it adds to the plain punctuation rules out most words in source lines and file
# names: a pair's name is a list's first item, so what follows its "," is never a key
# ('"requests/sessions.py","abs_path":'); "token = await ..." is not name=value. The
# possessive runs take what ``_name_position``'s loops take, without backtracking. Blanks
# between a string and its ":" or "," are JSON's own (in a payload as an SDK sent it).
_NAME_TAIL = re.compile(
    rb"[A-Za-z0-9_\-.\[\]]*+[ \t]*+"
    rb"(?:\"[ \t\r\n]*+(?::|,(?![ \t\r\n]*+\"(?:[^\"\\]|\\[\x00-\xff])*\"[ \t\r\n]*:))"
    rb"|\\[\x00-\xff][ \t]*[=:]|'[ \t]*[=:]"
    rb"|(?<![ \t])=[>=]?[^ \t]|=[>=]?[ \t]*[\\']|:)"
)

Edit = tuple[int, int, bytes]  # begin, end, replacement


@dataclass
class Remarks:
    """What was filtered, by what: keyed so that a reader can attribute every
    ``[Filtered]`` it shows without paths (the JSON is edited, not walked)."""

    keys: dict[str, str] = field(default_factory=dict)  # key or pair name -> rule
    # Strings filtered under a sensitive name: filtered wherever else they appear too.
    learned: dict[str, str] = field(default_factory=dict)  # secret -> rule
    text: dict[str, list[str]] = field(default_factory=dict)  # text_id(string) -> rules
    fields: list[dict[str, object]] = field(default_factory=list)  # {"path", "rule"}: IPs

    def __bool__(self) -> bool:
        return bool(self.keys or self.text or self.fields)

    def as_json(self) -> dict[str, object]:
        return {"keys": self.keys, "text": self.text, "fields": self.fields}

    def learn(self, value: str, rule: str) -> None:
        """Remember a filtered value that looks like a secret (a password copied into
        another variable, a token passed on as an argument...)."""
        if len(value) > 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]  # Python SDKs send local variables as repr() strings
        if looks_secret(value):
            self.learned.setdefault(value, rule)

    def add_text(self, scrubbed: str, rules: list[str]) -> None:
        found = self.text.setdefault(text_id(scrubbed), [])
        found += [r for r in rules if r not in found]


MIN_LEARNED_CHARS = 8  # shorter filtered values are not searched for elsewhere


def looks_secret(value: str) -> bool:
    """One word of 8+ characters with a digit or a symbol in it, or of 12+ characters:
    a word like "password" or "production" would filter too much if searched for."""
    if len(value) < MIN_LEARNED_CHARS or value == FILTERED or _SPACE.search(value):
        return False
    return len(value) >= 12 or not value.isalpha()


_SPACE = re.compile(r"\s")  # str.isspace()'s characters (both use Py_UNICODE_ISSPACE)


def text_id(text: str) -> str:
    """A short digest of a scrubbed string, to find its rules again when it is shown."""
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=6).hexdigest()


class BlobScrubber:
    """One project's rules over JSON text; ``scrub(blob, remarks, keyed)``."""

    def __init__(self, keys: KeyMatcher, text: TextScrubber) -> None:
        self.keys = keys
        self.text = text

    def scrub(self, blob: bytes, remarks: Remarks, *, keyed: bool) -> bytes:
        """``blob`` with every rule applied; ``blob`` itself when nothing changed."""
        return spliced(blob, self.edits(blob, remarks, keyed=keyed))

    def edits(self, blob: bytes, remarks: Remarks, *, keyed: bool) -> list[Edit]:
        """The edits that apply every rule to ``blob``: sorted, disjoint (begin, end,
        replacement) spans."""
        return self._edits(blob, self.text.matches(blob), remarks, keyed, [])

    def sent_edits(self, payload: bytes, remarks: Remarks) -> tuple[list[Edit], list[str]] | None:
        """``edits`` of an event as an SDK sent it, and the top-level fields whose key
        rules were skipped (``modules``, ``sdk``; the caller checks, once the payload is
        parsed, that they were top-level). None when the payload must be parsed and
        normalized first: a character in it is escaped (a rule would see ``\\u0041``
        where the event has a letter), a log message's ``params`` are in it
        (normalization fills them into the message), or a skipped field appears twice."""
        unkeyed: list[str] = []
        try:
            edits = self._edits(payload, self.text.sent_matches(payload), remarks, True, unkeyed)
        except _Refused:
            return None
        return edits, unkeyed

    def _edits(
        self,
        blob: bytes,
        matches: list[tuple[int, int, int]],
        remarks: Remarks,
        keyed: bool,
        unkeyed: list[str],
    ) -> list[Edit]:
        text = self.text
        tail = text.name_tail
        marks = len(tail)  # indexes from here on are SENT_MARKS (only in sent_matches)
        edits: list[Edit] = []
        done = 0
        keyless_until = 0  # the end of a top-level field whose key rules are skipped
        strings = _Strings(blob)
        for index, start, end in matches:
            if start < done:
                continue
            if index >= marks:
                keyless_until = max(
                    keyless_until, _sent_mark(blob, index - marks, start, end, unkeyed)
                )
                continue
            # Most candidates are a sensitive word in prose or code ("session" in a file
            # name): one regex call rules out those not followed by what a name needs.
            ends = tail[index]
            if ends is not None and _NAME_TAIL.match(blob, start + ends) is None:
                continue
            if text.worth(blob, start, index):
                here = keyed and start >= keyless_until
                done = max(done, self._decide(blob, start, edits, remarks, here, strings))
        return edits

    def forget_learned(self, blob: bytes, remarks: Remarks) -> bytes:
        """``blob`` with every learned secret filtered in every string value (not in keys);
        call after ``scrub`` has seen the whole event."""
        return spliced(blob, self.learned_edits(blob, remarks))

    def learned_edits(self, blob: bytes, remarks: Remarks) -> list[Edit]:
        """The edits of ``forget_learned``: each replaces one string value."""
        edits: list[Edit] = []
        tokens: dict[int, list[str]] = {}
        for secret, rule in remarks.learned.items():
            needle = orjson.dumps(secret)[1:-1]
            strings = _Strings(blob)
            at = blob.find(needle)
            while at != -1:
                opening = strings.opening(at)  # None: digits of a bare number
                if opening is not None:
                    tokens.setdefault(opening, []).append(rule)
                at = blob.find(needle, at + len(needle))
        for opening in sorted(tokens):
            closing = _string_end(blob, opening)
            after = _skip_ws(blob, closing + 1)
            if blob[after : after + 1] == b":":
                continue  # a key: names stay
            if self.keys.rule(_owner_name(blob, opening) or "") == SAFE:
                continue  # the value of a safe field
            text: str = orjson.loads(blob[opening : closing + 1])
            for secret in remarks.learned:
                text = text.replace(secret, FILTERED)
            edits.append((opening, closing + 1, orjson.dumps(text)))
            remarks.add_text(text, sorted(set(tokens[opening])))
        return edits

    def _decide(
        self,
        blob: bytes,
        pos: int,
        edits: list[tuple[int, int, bytes]],
        r: Remarks,
        keyed: bool,
        strings: _Strings,
    ) -> int:
        """Decide the place ``pos``; return the offset up to which the text is decided."""
        if blob[pos] == 0x22:  # '"': an exact-word pattern starts at the key's quote
            pos += 1
        if 0x30 <= blob[pos] <= 0x39:  # a card's digits: in a string, or a number
            opening = strings.opening(pos)
            if opening is None:
                return self._number(blob, pos, edits, r)
        else:  # letters and punctuation of valid JSON are only ever inside strings
            opening = _quote_before(blob, pos)
        closing = _string_end(blob, opening)
        after = _skip_ws(blob, closing + 1)
        value = _pair_value(blob, opening, after) if keyed else None
        if keyed and value is None and blob[after : after + 1] == b":":
            value = _skip_ws(blob, after + 1)
        text: str = orjson.loads(blob[opening : closing + 1])
        rule = self.keys.rule(text) if value is not None else None
        if rule != SAFE:
            scrubbed, rules = self.text.scrub(text)
            if rules:  # a secret in a key or name: the key is stored filtered too
                text = scrubbed
                edits.append((opening, closing + 1, orjson.dumps(scrubbed)))
                r.add_text(scrubbed, rules)
        if value is None or rule is None:
            return closing + 1
        end = _value_end(blob, value)
        if rule != SAFE and _hideable(blob[value:end]):
            edits.append((value, end, _FILTERED_JSON))
            r.keys[text] = rule
            if blob[value] == 0x22:
                r.learn(orjson.loads(blob[value:end]), rule)
        return end

    def _number(
        self, blob: bytes, pos: int, edits: list[tuple[int, int, bytes]], r: Remarks
    ) -> int:
        while pos > 0 and blob[pos - 1] in b"0123456789-+.eE":
            pos -= 1
        match = _NUMBER_END.match(blob, pos)
        end = match.end() if match else pos + 1
        digits = blob[pos:end].lstrip(b"-")
        if digits.isdigit() and is_card_number(digits.decode()):
            edits.append((pos, end, _FILTERED_JSON))
            r.add_text(FILTERED, [CREDIT_CARD])
        return end


class _Refused(Exception):
    """A payload that ``sent_edits`` cannot scrub as sent."""


# Escapes that Go's encoder writes for "&", "<" and ">": no rule's pattern holds them. But
# the rules see the escape's last digit before what follows, where the event has "&": a
# pattern that needs no letter or digit before it would not be found there.
_HARMLESS_ESCAPES = frozenset((b"\\u0026", b"\\u003c", b"\\u003e", b"\\u003C", b"\\u003E"))
_LONGEST_ANCHOR = max(map(len, BOUNDED_ANCHORS))


def _sent_mark(blob: bytes, mark: int, start: int, end: int, unkeyed: list[str]) -> int:
    """Handle ``SENT_MARKS[mark]``, found at ``blob[start:end]``: refuse the payload, or
    return the end of a field whose key rules are skipped (0 for any other mark)."""
    if mark == 0:  # an escape: harmless if no pattern could start right after it
        after = blob[start + 6 : start + 6 + _LONGEST_ANCHOR].translate(FOLD)
        # (nor in its digits, which fold to "0" as a card's do: a card after "& ")
        near = after[:1] in b"0 -" or after.startswith(BOUNDED_ANCHORS)
        if blob[start : start + 6] in _HARMLESS_ESCAPES and not near:
            return 0
        raise _Refused
    if blob[start:end] != SENT_MARKS[mark]:
        return 0  # "PARAMS", "SDK": folded to a mark, but no field normalization reads
    if mark == 1:  # "params"
        raise _Refused
    colon = _skip_ws(blob, end)  # "modules", "sdk": the fields key rules skip
    if blob[colon : colon + 1] != b":":
        return 0  # a string, not a key
    name = SENT_MARKS[mark].strip(b'"').decode()
    if name in unkeyed:
        raise _Refused
    unkeyed.append(name)
    return _object_end(blob, _skip_ws(blob, colon + 1))


_STRINGS = re.compile(rb'"[^"]*"')


def _object_end(blob: bytes, at: int) -> int:
    """``_value_end``, in a few C calls for an object without escapes (a ``modules`` of
    hundreds of strings) instead of a Python step per string: the first "}" after which
    the brackets outside strings balance (the quotes before it pair up: none is escaped)."""
    if blob[at : at + 1] == b"{":
        close = at
        for _ in range(64):
            close = blob.find(b"}", close + 1)
            if close == -1:
                break
            chunk = blob[at : close + 1]
            if b"\\" in chunk:
                break
            if chunk.count(b'"') % 2 == 0:
                bare = _STRINGS.sub(b"", chunk)
                if bare.count(b"{") + bare.count(b"[") == bare.count(b"}") + bare.count(b"]"):
                    return close + 1
    return _value_end(blob, at)


def _owner_name(blob: bytes, opening: int) -> str | None:
    """The key (or pair list name) whose value is the string at ``opening``, if any."""
    before = opening - 1
    while before >= 0 and blob[before] in JSON_BLANKS:
        before -= 1
    if before < 1 or blob[before] not in b":,":
        return None
    closing = before - 1
    while closing >= 0 and blob[closing] in JSON_BLANKS:
        closing -= 1
    if closing < 1 or blob[closing] != 0x22 or _escaped(blob, closing):
        return None
    start = _quote_before(blob, closing)
    if blob[before] == 0x2C:  # ',': a pair's value only if the name opens a list
        previous = start - 1
        while previous >= 0 and blob[previous] in JSON_BLANKS:
            previous -= 1
        if previous < 0 or blob[previous] != 0x5B:
            return None
    name: str = orjson.loads(blob[start : closing + 1])
    return name


def spliced(blob: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    """``blob`` with the (sorted, disjoint) edits made; ``blob`` itself without edits."""
    if not edits:
        return blob
    parts: list[bytes] = []
    at = 0
    for begin, end, replacement in edits:
        parts += (blob[at:begin], replacement)
        at = end
    parts.append(blob[at:])
    return b"".join(parts)


def _escaped(blob: bytes, quote: int) -> bool:
    """Whether the quote at ``quote`` is escaped (an odd run of backslashes before it)."""
    run = 0
    while quote - run - 1 >= 0 and blob[quote - run - 1] == 0x5C:
        run += 1
    return run % 2 == 1


def _string_end(blob: bytes, opening: int) -> int:
    at = opening + 1
    while True:
        quote = blob.index(b'"', at)
        if not _escaped(blob, quote):
            return quote
        at = quote + 1


class _Strings:
    """Where the string around an offset of a JSON document opens, for offsets asked in
    increasing order (else counted again from the start): the unescaped quotes before the
    offset are counted from the last offset asked, so that a document of many numbers
    costs its size once, not once per number."""

    def __init__(self, blob: bytes) -> None:
        self.blob = blob
        self.at = 0  # the quotes before this offset are counted
        self.quotes = 0

    def opening(self, pos: int) -> int | None:
        """The opening quote of the string ``pos`` is in, or None when ``pos`` is outside
        every string (an odd count of unescaped quotes before it: inside)."""
        blob = self.blob
        if pos < self.at:
            self.at = self.quotes = 0
        start = self.at  # a run of backslashes is counted whole: from where it begins
        while start > 0 and blob[start - 1] == 0x5C:
            start -= 1
        self.quotes += blob.count(b'"', self.at, pos) - _escaped_quotes(blob, start, pos)
        self.at = pos
        return _quote_before(blob, pos) if self.quotes % 2 else None


def _quote_before(blob: bytes, pos: int) -> int:
    """The nearest unescaped quote before ``pos`` (the opening one, inside a string)."""
    at = pos
    while True:
        quote = blob.rindex(b'"', 0, at)
        if not _escaped(blob, quote):
            return quote
        at = quote


def _escaped_quotes(blob: bytes, start: int, pos: int) -> int:
    """Quotes between ``start`` and ``pos`` preceded by an odd run of backslashes that
    begins at or after ``start`` (inclusion-exclusion over runs of 1, 2, 3...)."""
    total, run, sign = 0, 1, 1
    while True:
        found = blob.count(b"\\" * run + b'"', start, pos)
        if not found:
            return total
        total += sign * found
        run, sign = run + 1, -sign


def _skip_ws(blob: bytes, at: int) -> int:
    while at < len(blob) and blob[at] in JSON_BLANKS:
        at += 1
    return at


def _pair_value(blob: bytes, opening: int, after: int) -> int | None:
    """Where the value of ``[name, value]`` starts when the string at ``opening`` is the
    name of such a two-item list, else None."""
    before = opening - 1
    while before >= 0 and blob[before] in JSON_BLANKS:
        before -= 1
    if before < 0 or blob[before] != 0x5B or blob[after : after + 1] != b",":
        return None
    value = _skip_ws(blob, after + 1)
    end = _skip_ws(blob, _value_end(blob, value))
    return value if blob[end : end + 1] == b"]" else None


def _value_end(blob: bytes, at: int) -> int:
    """The offset just past the JSON value that starts at ``at``."""
    first = blob[at : at + 1]
    if first == b'"':
        return _string_end(blob, at) + 1
    if first not in (b"{", b"["):
        match = _NUMBER_END.match(blob, at)
        return match.end() if match else at
    depth = 0
    pos = at
    while True:
        match = _STRUCTURE.search(blob, pos)
        if match is None:
            return len(blob)
        char = match.group()
        if char == b'"':
            pos = _string_end(blob, match.start()) + 1
            continue
        depth += 1 if char in (b"{", b"[") else -1
        pos = match.end()
        if depth == 0:
            return pos


def _hideable(value: bytes) -> bool:
    """Null, booleans and empty values say only whether something was set: kept."""
    if len(value) < 8:  # "[ ]" as an SDK may send it is "[]"
        value = b"".join(value.split())
    return value not in (b"null", b"true", b"false", b'""', b"[]", b"{}")
