"""The test oracle: the same rules applied by a plain walk over every value of the event.

``tracebox.privacy`` scrubs the event's JSON text instead (a walk costs ~1,700 Python
steps per benchmark event; docs/performance.md); the property tests check that both give
the same event. Remarks are kept here as paths, which the oracle's tests look at.
"""

from __future__ import annotations

from typing import Any

import orjson

from tracebox.privacy.blob import Remarks
from tracebox.privacy.keys import SAFE, KeyMatcher
from tracebox.privacy.rules import (
    CREDIT_CARD,
    FILTERED,
)
from tracebox.privacy.scrubber import _echoed_params, _ips
from tracebox.privacy.settings import PrivacySettings
from tracebox.privacy.text import TextScrubber, is_card_number

REMARKS_KEY = "_scrubbed"  # in the stored payload: [{"path": [...], "rule": id}, ...]
# Top-level keys that hold no free text: ids, times and enumerations set by normalization.
_UNTOUCHED = frozenset({"event_id", "timestamp", "received", "level", "platform", REMARKS_KEY})
_NO_KEY_RULES = frozenset({"modules", "sdk"})
_MIN_CARD = 10**12  # 13 digits
_MAX_CARD = 10**19
_MIN_ECHO_CHARS = 4  # a filtered param shorter than this is not searched for in the message

Path = list[str | int]


class Scrubber:
    """One project's compiled rules; ``scrub(event)`` returns the scrubbed copy."""

    def __init__(self, settings: PrivacySettings) -> None:
        self.settings = settings
        self.keys = KeyMatcher(settings)
        self.text = TextScrubber(self.keys, defaults=settings.scrub_data)
        self._key_text: dict[str, str] = {}

    def scrub(self, event: dict[str, Any]) -> dict[str, Any]:
        walk = _Walk(self)
        out: dict[str, Any] = {}
        for key, value in event.items():
            if key in _UNTOUCHED or not self.settings.scrub_data:
                out[key] = value
                continue
            walk.path.append(key)
            out[key] = walk.value(value, keyed=key not in _NO_KEY_RULES)
            walk.path.pop()
        if self.settings.scrub_data and walk.learned.learned:
            out = {k: _forget(v, walk.learned.learned, self.keys, k) for k, v in out.items()}
        if self.settings.scrub_data:
            # What normalization derives and IP handling: the package's own code (the
            # oracle checks the walk over the event, not these).
            _echoed_params(event, out, walk.learned)
        _ips(out, self.settings, walk.learned)
        out.pop(REMARKS_KEY, None)
        if walk.remarks:
            out[REMARKS_KEY] = walk.remarks
        return out


class _Walk:
    """One event's walk: the path to the current value and the remarks so far."""

    def __init__(self, scrubber: Scrubber) -> None:
        self.keys = scrubber.keys
        self.text = scrubber.text
        self.key_text = scrubber._key_text
        self.path: Path = []
        self.remarks: list[dict[str, Any]] = []
        self.learned = Remarks()  # only its learned secrets are used here

    def remark(self, rule: str, *extra: str | int) -> None:
        self.remarks.append({"path": [*self.path, *extra], "rule": rule})

    def value(self, value: Any, *, keyed: bool) -> Any:
        kind = type(value)
        if kind is str:
            return self.string(value)
        if kind is dict:
            return self.mapping(value, keyed)
        if kind is list:
            if keyed and len(value) == 2 and type(value[0]) is str:
                return self.pair(value)  # [name, value]: a pair wherever it is
            return self.sequence(value, keyed)
        if kind is int and _MIN_CARD <= abs(value) < _MAX_CARD and is_card_number(str(value)):
            self.remark(CREDIT_CARD)
            return FILTERED
        return value

    def string(self, text: str) -> str:
        scrubbed, rules = self.text.scrub(text)
        for rule in rules:
            self.remark(rule)
        return scrubbed

    def mapping(self, mapping: dict[str, Any], keyed: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in mapping.items():
            self.path.append(key)
            rule = self.keys.rule(key) if keyed else None
            if rule == SAFE:
                out[key] = value
            elif rule is not None:
                out[self.name(key)] = self.filtered(value, rule)
            else:
                out[self.name(key)] = self.value(value, keyed=keyed)
            self.path.pop()
        return out

    def name(self, key: str) -> str:
        """An object key with secrets in it filtered (a cache keyed by a token...);
        memoized: the same keys come back in every event."""
        found = self.key_text.get(key)
        if found is None:
            found, rules = self.text.scrub(key)
            if rules:
                for rule in rules:
                    self.remark(rule)
                return found  # not cached: the remark must be made for every event
            if len(self.key_text) < 4096:
                self.key_text[key] = found
        return found

    def filtered(self, value: Any, rule: str) -> Any:
        """``[Filtered]`` for a value worth hiding; null, booleans and empty values stay
        (as Relay: they carry no secret and say whether something was set)."""
        if value is None or type(value) is bool or value in ("", [], {}):
            return value
        self.remark(rule)
        if isinstance(value, str):
            self.learned.learn(value, rule)
        return FILTERED

    def sequence(self, items: list[Any], keyed: bool) -> list[Any]:
        out: list[Any] = []
        for index, item in enumerate(items):
            self.path.append(index)
            out.append(self.value(item, keyed=keyed))
            self.path.pop()
        return out

    def pair(self, item: list[Any]) -> list[Any]:
        """``[name, value]`` of a pair list (headers, tags, query strings, cookies)."""
        name, value = item
        rule = self.keys.rule(name)
        if rule == SAFE:
            return list(item)
        self.path.append(0)
        name = self.string(name)
        self.path[-1] = 1
        value = self.value(value, keyed=True) if rule is None else self.filtered(value, rule)
        self.path.pop()
        return [name, value]


def _forget(value: Any, secrets: dict[str, str], keys: KeyMatcher, owner: object) -> Any:
    """Every learned secret filtered in every string but object keys and the string
    values of safe fields (``owner``: the key or pair name the value is under)."""
    if isinstance(value, str):
        if isinstance(owner, str) and keys.rule(owner) == SAFE:
            return value
        for secret in secrets:
            value = value.replace(secret, FILTERED)
        return value
    if isinstance(value, dict):
        return {k: _forget(v, secrets, keys, k) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) == 2 and isinstance(value[0], str):
            return [
                _forget(value[0], secrets, keys, None),
                _forget(value[1], secrets, keys, value[0]),
            ]
        return [_forget(v, secrets, keys, None) for v in value]
    return value


def whole_json_scrub(event: dict[str, Any], settings: PrivacySettings) -> dict[str, Any]:
    """The scrub as it was before per-field reloading: the event's JSON scrubbed, then
    parsed whole. ``privacy.scrub`` must give exactly this (remarks included)."""
    from tracebox.privacy import scrubber_for

    blob_scrubber = scrubber_for(settings).blob
    remarks = Remarks()
    out = {k: v for k, v in event.items() if k != REMARKS_KEY}
    if settings.scrub_data:
        parts = [
            ({k: v for k, v in out.items() if k not in _NO_KEY_RULES}, True),
            ({k: out[k] for k in _NO_KEY_RULES if k in out}, False),
        ]
        blobs = [(orjson.dumps(part), keyed) for part, keyed in parts if part]
        scrubbed = [blob_scrubber.scrub(b, remarks, keyed=keyed) for b, keyed in blobs]
        if remarks.learned:
            scrubbed = [blob_scrubber.forget_learned(b, remarks) for b in scrubbed]
        for (before, _), after in zip(blobs, scrubbed, strict=True):
            if after is not before:
                out.update(orjson.loads(after))
        _echoed_params(event, out, remarks)
    _ips(out, settings, remarks)
    if remarks:
        out[REMARKS_KEY] = remarks.as_json()
    return out
