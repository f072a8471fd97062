"""Scrub one normalized event: the JSON rules (``blob.py``), then what normalization
derives (the formatted log message), then IP handling, then the remarks.

Key rules apply everywhere except inside ``modules`` and ``sdk`` (package names such as
``authlib`` are not secrets); text rules apply to every string, keys included. A safe
field's value is kept whole, its children too. The input event is never changed.

``scrub_sent`` applies the same rules to an event's payload as the SDK sent it, before it
is parsed: the digest then parses the scrubbed payload, normalizes it and ``finish``es it
(IP handling, the remarks), and neither serializes the event for the scan nor parses the
edited fields again (docs/design.md "Where privacy scrubbing runs").
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson

from tracebox.privacy import ip
from tracebox.privacy.blob import BlobScrubber, Edit, Remarks, spliced, text_id
from tracebox.privacy.keys import SAFE, KeyMatcher
from tracebox.privacy.rules import FILTERED, IP_ANONYMIZED, IP_REMOVED, SENSITIVE_KEY, normalize_key
from tracebox.privacy.settings import IpMode, PrivacySettings
from tracebox.privacy.text import SENT_MARKS, TextScrubber

REMARKS_KEY = "_scrubbed"  # in the stored payload: Remarks.as_json()
_NO_KEY_RULES = ("modules", "sdk")
_MIN_ECHO_CHARS = 4  # a filtered param shorter than this is not searched for in the message
# The keys whose values normalization checks (protocol.event): a value filtered before
# normalization may be dropped or changed where the normalized one is filtered, so a
# project whose rules filter one of them (an additional name "user"...) is not scrubbed as
# sent. The default rules filter none of them.
_NORMALIZED_KEYS = (
    *("event_id", "timestamp", "received", "platform", "level", "environment", "tags"),
    *("logger", "transaction", "server_name", "release", "dist", "culprit", "fingerprint"),
    *("logentry", "message", "params", "formatted", "contexts", "extra", "modules", "sdk"),
    *("debug_meta", "exception", "threads", "stacktrace", "request", "breadcrumbs", "user"),
    *("values", "type", "value", "module", "mechanism", "thread_id", "frames", "filename"),
    *("abs_path", "function", "raw_function", "package", "context_line", "lineno", "colno"),
    *("in_app", "pre_context", "post_context", "vars", "instruction_addr", "symbol_addr"),
    *("image_addr", "id", "name", "state", "crashed", "current", "main", "held_locks"),
    *("url", "method", "headers", "category", "data", "email", "username", "ip_address"),
    *("sentry.interfaces.Exception", "sentry.interfaces.Stacktrace", "sentry.interfaces.Http"),
    *("sentry.interfaces.User", "sentry.interfaces.Message"),
)

Path = list[str | int]


class Scrubber:
    """One project's compiled rules; ``scrub(event)`` returns the scrubbed copy."""

    def __init__(self, settings: PrivacySettings) -> None:
        self.settings = settings
        keys = KeyMatcher(settings)
        text = TextScrubber(keys, defaults=settings.scrub_data)
        self.blob = BlobScrubber(keys, text)
        hidden = any(_overlaps(p, mark) for p in text.patterns for mark in SENT_MARKS)
        typed = any(keys.rule(key) not in (None, SAFE) for key in _NORMALIZED_KEYS)
        self._sent = not hidden and not typed

    def scrub(self, event: dict[str, Any]) -> dict[str, Any]:
        remarks = Remarks()
        out = {k: v for k, v in event.items() if k != REMARKS_KEY}
        if self.settings.scrub_data:
            parts = [
                _Part([(k, v) for k, v in out.items() if k not in _NO_KEY_RULES], keyed=True),
                _Part([(k, out[k]) for k in _NO_KEY_RULES if k in out], keyed=False),
            ]
            parts = [part for part in parts if part.items]
            edits = [self.blob.edits(part.blob, remarks, keyed=part.keyed) for part in parts]
            for part, found in zip(parts, edits, strict=True):
                self._reload(part, found, out, remarks)
            _echoed_params(event, out, remarks)
        return _finished(out, self.settings, remarks)

    def scrub_sent(self, payload: bytes) -> Sent | None:
        """``payload``, an event as an SDK sent it (JSON), with the rules of ``scrub``
        applied, or None when the event must be parsed and normalized first, then
        ``scrub``bed (``BlobScrubber.sent_edits`` says when; a project whose additional
        names could hide what it must see, too). What normalization does not keep
        (an unknown field, a string's end past its length limit) is scrubbed too, and a
        secret learned there is filtered elsewhere: never less than ``scrub``, at times
        more."""
        remarks = Remarks()
        if not self.settings.scrub_data:
            return Sent(payload, remarks, [], self.settings)
        if not self._sent:
            return None
        try:
            found = self.blob.sent_edits(payload, remarks)
            if found is None:
                return None
            edits, unkeyed = found
            scrubbed = spliced(payload, edits)
            if remarks.learned:
                scrubbed = self.blob.forget_learned(scrubbed, remarks)
        except (ValueError, IndexError):  # not JSON (a string without its end...): parse says
            return None
        return Sent(scrubbed, remarks, unkeyed, self.settings)

    def _reload(self, part: _Part, found: list[Edit], out: dict[str, Any], r: Remarks) -> None:
        """Put the values of ``part`` that ``found`` and the learned secrets (if any) change
        into ``out``, parsed again; the other values stay as they are (equal to a parse of
        their JSON). Parses the whole part when an edit is not inside one value."""
        changed = part.edited(found)
        if changed is not None and r.learned:
            part.replace(changed)
            found = self.blob.learned_edits(part.blob, r)
            more = part.edited(found)
            if more is None:  # as below, from the part with the first edits made
                out.update(orjson.loads(spliced(part.blob, found)))
                return
            changed.update(more)
        if changed is None:
            after = spliced(part.blob, found)
            if r.learned:
                after = self.blob.forget_learned(after, r)
            if after is not part.blob:
                out.update(orjson.loads(after))
            return
        out.update({part.items[i][0]: orjson.loads(value) for i, value in changed.items()})


@dataclass
class Sent:
    """A payload scrubbed by ``Scrubber.scrub_sent``: parse it, check it ``fits``,
    normalize it, ``finish`` it."""

    payload: bytes
    remarks: Remarks
    unkeyed: list[str]  # the fields whose key rules were skipped: top-level ones?
    settings: PrivacySettings

    def fits(self, raw: dict[str, Any]) -> bool:
        """Whether the payload, parsed, has at its top level every field whose key rules
        were skipped; if not, one of them was nested, and the event must be ``scrub``bed
        after normalization instead."""
        return all(name in raw for name in self.unkeyed)

    def finish(self, event: dict[str, Any]) -> dict[str, Any]:
        """The normalized event with IP handling done and the remarks in it."""
        return _finished(event, self.settings, self.remarks)


def _finished(event: dict[str, Any], settings: PrivacySettings, remarks: Remarks) -> dict[str, Any]:
    _ips(event, settings, remarks)
    if remarks:
        event[REMARKS_KEY] = remarks.as_json()
    return event


def _overlaps(pattern: bytes, mark: bytes) -> bool:
    """Whether a match of ``pattern`` could hide ``mark`` from the automaton's pass, or
    the other way round: one inside the other, or the end of one the start of the other,
    beyond a lone '"' (in valid JSON a string's closing quote never meets an opening one)."""
    if mark == b"\\u":  # followed by four hex digits, folded to "0" and "a"-"f"
        ends = pattern.endswith(b"\\") or (pattern[:1] == b"u" and pattern[1:2] in b"0abcdef")
        return ends or mark in pattern
    if pattern in mark or mark in pattern:
        return True
    for a, b in ((pattern, mark), (mark, pattern)):
        for size in range(1, min(len(a), len(b))):
            if a[-size:] == b[:size] and a[-size:] != b'"':
                return True
    return False


class _Part:
    """Top-level fields of an event as one JSON object (what ``orjson.dumps`` of them as a
    dict gives), with each field's name and value serialized apart: an edit then costs a
    parse of the values it touched, not of the whole event (every event has a cookie
    header, and 11% of the benchmark's have a learned secret)."""

    def __init__(self, items: list[tuple[str, Any]], *, keyed: bool) -> None:
        self.items = items
        self.keyed = keyed
        self._names: list[bytes] = []
        self._values: list[bytes] = []
        self._split = all(type(key) is str for key, _ in items)
        if keyed and self._split:  # edits are all but certain (every event has a cookie)
            self._serialize()
        else:  # one call; the fields are serialized again only if an edit needs them
            self.blob = orjson.dumps(dict(items))

    def _serialize(self) -> None:
        self._names = [_name(key) for key, _ in self.items]
        self._values = [orjson.dumps(value) for _, value in self.items]
        self._join()

    def _join(self) -> None:
        fields = map(b":".join, zip(self._names, self._values, strict=True))
        self.blob = b"{%b}" % b",".join(fields)

    def edited(self, edits: list[Edit]) -> dict[int, bytes] | None:
        """The new JSON of each value that ``edits`` (made on ``blob``) change, by field
        index; None when an edit is not inside one value (a key edited), or the fields
        cannot be serialized apart (a key that is not a ``str``)."""
        if not edits:
            return {}
        if not self._split:
            return None
        if not self._values:
            self._serialize()
        starts = []  # where each value starts in blob
        at = 1  # past "{"
        for name, value in zip(self._names, self._values, strict=True):
            starts.append(at + len(name) + 1)
            at += len(name) + len(value) + 2  # past ':' and ','
        grouped: dict[int, list[Edit]] = {}
        for edit in edits:
            field = bisect_right(starts, edit[0]) - 1
            start = starts[field] if field >= 0 else 0
            if field < 0 or edit[1] > start + len(self._values[field]):
                return None
            grouped.setdefault(field, []).append((edit[0] - start, edit[1] - start, edit[2]))
        return {i: spliced(self._values[i], found) for i, found in grouped.items()}

    def replace(self, values: dict[int, bytes]) -> None:
        """Make the edits that ``edited`` gave (``blob`` follows)."""
        if values:
            for i, value in values.items():
                self._values[i] = value
            self._join()


@lru_cache(maxsize=1024)
def _name(key: str) -> bytes:
    """A top-level key as JSON: the few names of the protocol, serialized once."""
    return orjson.dumps(key)


def _echoed_params(event: dict[str, Any], out: dict[str, Any], remarks: Remarks) -> None:
    """A log message is its template with the params filled in, so a secret is in both:
    a param filtered by its name is filtered in ``formatted`` too, and a param that a text
    rule filtered out of ``formatted`` is filtered itself."""
    before, after = event.get("logentry"), out.get("logentry")
    if not isinstance(before, dict) or not isinstance(after, dict) or before is after:
        return
    raw, formatted = before.get("formatted"), after.get("formatted")
    if not isinstance(raw, str) or not isinstance(formatted, str):
        return
    slots = list(zip(_slots(before.get("params")), _slots(after.get("params")), strict=False))
    rules = remarks.text.get(text_id(formatted), []) if formatted != raw else []
    for (_, sent), (_, kept) in slots:
        if kept == FILTERED and isinstance(sent, str) and len(sent) >= _MIN_ECHO_CHARS:
            formatted = formatted.replace(sent, FILTERED)
    if formatted != after["formatted"]:
        after["formatted"] = formatted
        remarks.add_text(formatted, [*rules, SENSITIVE_KEY])
    params = after.get("params")
    for (_, sent), (slot, kept) in slots:
        if isinstance(sent, str) and kept == sent and sent in raw and sent not in formatted:
            params[slot] = FILTERED  # type: ignore[index]
            remarks.add_text(FILTERED, rules or [SENSITIVE_KEY])


def _slots(params: Any) -> list[tuple[Any, Any]]:
    if isinstance(params, dict):
        return list(params.items())
    if isinstance(params, list):
        return list(enumerate(params))
    return []


def _ips(event: dict[str, Any], settings: PrivacySettings, remarks: Remarks) -> None:
    """IP handling on ``user.ip_address``, ``request.env`` and the request's forwarding
    headers; the containers changed are copied first (they may be the input's)."""
    mode = settings.ip_mode
    user = event.get("user")
    if isinstance(user, dict) and "ip_address" in user:
        drop = settings.drop_user_ip or mode is IpMode.DROP
        if drop or mode is IpMode.ANONYMIZE:
            user = event["user"] = dict(user)
            _one_ip(user, "ip_address", drop, ["user", "ip_address"], remarks)
    request = event.get("request")
    if mode is IpMode.STORE or not isinstance(request, dict):
        return
    request = event["request"] = dict(request)
    if isinstance(request.get("env"), dict):
        env = request["env"] = dict(request["env"])
        for key in [k for k in env if normalize_key(k) in ip.IP_ENV_KEYS]:
            _one_ip(env, key, mode is IpMode.DROP, ["request", "env", key], remarks)
    if isinstance(request.get("headers"), list):
        request["headers"] = _ip_headers(request["headers"], mode, remarks)


def _one_ip(holder: dict[str, Any], key: str, drop: bool, path: Path, remarks: Remarks) -> None:
    value = holder[key]
    anonymized = None if drop or not isinstance(value, str) else ip.anonymize(value)
    if anonymized is None:
        del holder[key]
        remarks.fields.append({"path": path, "rule": IP_REMOVED})
    elif anonymized != value:
        holder[key] = anonymized
        remarks.fields.append({"path": path, "rule": IP_ANONYMIZED})


def _ip_headers(headers: list[Any], mode: IpMode, remarks: Remarks) -> list[Any]:
    """Forwarding headers anonymised, or removed."""
    out: list[Any] = []
    for pair in headers:
        if not _is_ip_header(pair):
            out.append(pair)
        elif mode is IpMode.DROP:
            remarks.fields.append({"path": ["request", "headers", pair[0]], "rule": IP_REMOVED})
        else:
            value = ip.anonymize_text(pair[1])
            if value != pair[1]:
                path = ["request", "headers", pair[0]]
                remarks.fields.append({"path": path, "rule": IP_ANONYMIZED})
            out.append([pair[0], value])
    return out


def _is_ip_header(pair: Any) -> bool:
    return (
        isinstance(pair, list)
        and len(pair) == 2
        and isinstance(pair[0], str)
        and isinstance(pair[1], str)
        and normalize_key(pair[0]) in ip.IP_HEADERS
    )
