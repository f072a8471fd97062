"""Rule filters and release ordering (pure functions)."""

from __future__ import annotations

import fnmatch
import re

from tracebox.alerts.model import EventSummary
from tracebox.protocol.levels import LEVELS
from tracebox.store.alerts import AlertRule

SEVERITY = {level: rank for rank, level in enumerate(reversed(LEVELS))}  # debug 0 .. fatal 4
DERIVED_TAGS = ("level", "environment", "release")


def matches(rule: AlertRule, event: EventSummary) -> bool:
    """Whether an event passes the rule's filters (a filter left empty passes all)."""
    if rule.environment and event.environment != rule.environment:
        return False
    if rule.min_level and SEVERITY.get(event.level, 0) < SEVERITY.get(rule.min_level, 0):
        return False
    if rule.release and not release_matches(rule.release, event.release):
        return False
    return not rule.tag_key or has_tag(event, rule.tag_key, rule.tag_value)


def release_matches(pattern: str, release: str | None) -> bool:
    """Exact, or a shell-style pattern (``web@2.*``)."""
    if release is None:
        return False
    return release == pattern or fnmatch.fnmatchcase(release, pattern)


def has_tag(event: EventSummary, key: str, value: str | None) -> bool:
    """The event has tag ``key`` (with ``value``, when one is given). ``level``,
    ``environment`` and ``release`` are tags too, as on the error's details page."""
    derived = {"level": event.level, "environment": event.environment, "release": event.release}
    values = [v for k, v in event.tags if k == key]
    if key in derived and derived[key] is not None:
        values.append(str(derived[key]))
    return bool(values) and (value is None or value in values)


def _version_key(release: str) -> list[tuple[int, int | str]]:
    """Natural order of a release's version part (``pkg@1.10.0`` after ``pkg@1.9.2``)."""
    version = release.rsplit("@", 1)[-1]
    parts = re.findall(r"\d+|[A-Za-z]+", version)
    return [(0, int(p)) if p.isdigit() else (1, p.lower()) for p in parts]


def is_later_release(release: str | None, resolved_in: str | None) -> bool:
    """Whether an event of ``release`` counts as a regression of an error resolved in
    ``resolved_in``. Without a resolved release every event counts; an event without a
    release, or of a release not later than it, does not."""
    if resolved_in is None:
        return True
    if release is None or release == resolved_in:
        return False
    return _version_key(release) > _version_key(resolved_in)
