"""Which key names are sensitive, safe, or neither, for one project's settings."""

from __future__ import annotations

import re

from tracebox.privacy.rules import (
    ADDITIONAL_FIELD,
    NOT_SENSITIVE,
    SENSITIVE_EXACT,
    SENSITIVE_KEY,
    SENSITIVE_WORDS,
    normalize_key,
)
from tracebox.privacy.settings import PrivacySettings

SAFE = "safe"  # KeyMatcher.rule() for a safe field: its value is never scrubbed
MAX_CACHED_KEYS = 4096  # event keys are chosen by SDKs and applications: bound the cache


class KeyMatcher:
    """``rule(key)``: the rule id that filters a value under ``key``, ``SAFE``, or None."""

    def __init__(self, settings: PrivacySettings) -> None:
        self.scrubbing = settings.scrub_data
        # Turning scrubbing off turns the additional names off too (as Sentry's switch).
        additional = settings.sensitive_fields if settings.scrub_data else ()
        self.additional = tuple(normalize_key(n) for n in additional)
        self.additional_parts = tuple(name_parts(n) for n in additional)
        self.safe = frozenset(normalize_key(n) for n in settings.safe_fields)
        self._cache: dict[str, str | None] = {}

    def rule(self, key: str) -> str | None:
        try:
            return self._cache[key]
        except KeyError:
            if len(self._cache) >= MAX_CACHED_KEYS:
                self._cache.clear()
            found = self._cache[key] = self._decide(normalize_key(key))
            return found

    def _decide(self, name: str) -> str | None:
        if name in self.safe:
            return SAFE
        if not self.scrubbing:
            return None
        if any(word in name for word in self.additional):
            return ADDITIONAL_FIELD
        if name in NOT_SENSITIVE:
            return None
        if name in SENSITIVE_EXACT or any(word in name for word in SENSITIVE_WORDS):
            return SENSITIVE_KEY
        return None


_PARTS = re.compile(r"[-_. \t\[\]]+|(?<=[a-z0-9])(?=[A-Z])")


def name_parts(name: str) -> tuple[str, ...]:
    """``my_Sekret``, ``mySekret``, ``my-sekret`` -> ("my", "sekret"): the words of a
    name, so that it is found with any separator between them."""
    return tuple(p.lower() for p in _PARTS.split(name) if p)
