"""Marks on the details page for values the privacy rules changed (issue 11): every
``[Filtered]`` becomes a visible marker whose title names the rule, an anonymised IP
address is marked too, and the legend lists the rules that changed the event with the
setting that keeps such values.

Values are still untrusted event content: everything but the marker is escaped here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

from tracebox.privacy import FILTERED, RULES, Rule, ScrubRecord
from tracebox.ui.render import pretty

UNKNOWN = Rule(
    "unknown",
    "Filtered before it was stored",
    "No rule of this project is recorded for this value: the SDK's own scrubbing (or a "
    "proxy) sent [Filtered], or the event was stored before privacy rules existed.",
    "Check the SDK's options (send_default_pii, before_send, event scrubber)",
)


@dataclass(frozen=True)
class LegendEntry:
    rule: Rule
    count: int  # values marked on this page


class ScrubMarks:
    """One event's marks; ``mark`` is called by the template for each value it shows."""

    def __init__(self, record: ScrubRecord) -> None:
        self.record = record
        self.counts: dict[str, int] = {}

    def mark(
        self, value: Any, key: object = None, path: tuple[str | int, ...] = (), like: Any = None
    ) -> Markup:
        """``value`` as escaped text, each ``[Filtered]`` in it marked; ``like``: another
        value whose rules apply (a title is derived from the exception's value)."""
        text = value if isinstance(value, str) else pretty(value)
        field_rule = self.record.field_rule(*path) if path else None
        if FILTERED not in text:
            if field_rule is None:
                return escape(text)
            return self._marker(escape(text), (field_rule,))
        rules = self._rules(value, key) or (self._rules(like) if like is not None else ())
        marker = self._marker(Markup(escape(FILTERED)), rules or (UNKNOWN.id,))
        return marker.join(escape(part) for part in text.split(FILTERED))

    def legend(self) -> list[LegendEntry]:
        """The rules marked on the page, then those that changed the event elsewhere."""
        ids = [*self.counts, *(r for r in self.record.rules() if r not in self.counts)]
        return [LegendEntry(_rule(r), self.counts.get(r, 0)) for r in ids]

    def _rules(self, value: Any, key: object = None) -> tuple[str, ...]:
        if isinstance(value, str):
            return self.record.rules_for(value, key)
        found: list[str] = []
        for inner_key, text in _strings(value, key):
            for rule in self.record.rules_for(text, inner_key):
                if rule not in found:
                    found.append(rule)
        return tuple(found)

    def _marker(self, inner: Markup, rules: tuple[str, ...]) -> Markup:
        for rule in rules:
            self.counts[rule] = self.counts.get(rule, 0) + 1
        titles = "; ".join(_rule(r).title for r in rules)
        return Markup(
            '<mark class="scrubbed" tabindex="0" data-rules="{}" title="{}">{}</mark>'
        ).format(" ".join(rules), f"{titles} (see Privacy below)", inner)


def _rule(rule_id: str) -> Rule:
    return RULES.get(rule_id, UNKNOWN)


def _strings(value: Any, key: object = None) -> list[tuple[object, str]]:
    """(key, string) for every string in a shown value; a pair list's name is the key."""
    if isinstance(value, str):
        return [(key, value)]
    if isinstance(value, dict):
        return [item for k, v in value.items() for item in _strings(v, k)]
    if isinstance(value, list):
        if len(value) == 2 and isinstance(value[0], str):
            return [(None, value[0]), *_strings(value[1], value[0])]
        return [item for v in value for item in _strings(v)]
    return []
