"""Reading the remarks back from a stored payload, to say which rule filtered a value
that is shown. The payload is untrusted JSON there too: anything malformed is skipped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracebox.privacy.blob import text_id
from tracebox.privacy.rules import FILTERED, RULES
from tracebox.privacy.scrubber import REMARKS_KEY

MAX_REMARKS_READ = 10_000  # entries read per kind; a payload is at most a few MiB


@dataclass(frozen=True)
class FieldRemark:
    path: tuple[str | int, ...]  # from the event's root: ("user", "ip_address")
    rule: str


@dataclass(frozen=True)
class ScrubRecord:
    """What the scrubber noted in one event (empty for events stored before it)."""

    keys: dict[str, str] = field(default_factory=dict)  # key or pair name -> rule
    text: dict[str, tuple[str, ...]] = field(default_factory=dict)  # text_id -> rules
    fields: tuple[FieldRemark, ...] = ()  # IP addresses anonymised or removed

    def rules_for(self, value: Any, key: object = None) -> tuple[str, ...]:
        """The rules that filtered ``value`` (shown under ``key``, if any); empty when
        the value holds no ``[Filtered]`` or it came so from the SDK."""
        if not isinstance(value, str) or FILTERED not in value:
            return ()
        if value == FILTERED and isinstance(key, str) and key in self.keys:
            return (self.keys[key],)
        return self.text.get(text_id(value), ())

    def field_rule(self, *path: str | int) -> str | None:
        return next((f.rule for f in self.fields if f.path == path), None)

    def rules(self) -> list[str]:
        """Every rule that changed this event, in the order of ``RULES``."""
        used = {*self.keys.values(), *(r for rs in self.text.values() for r in rs)}
        used |= {f.rule for f in self.fields}
        return [rule for rule in RULES if rule in used]


def read_remarks(payload: dict[str, Any]) -> ScrubRecord:
    found = payload.get(REMARKS_KEY)
    if not isinstance(found, dict):
        return ScrubRecord()
    keys = _mapping(found.get("keys"))
    text = {
        k: tuple(r for r in v if r in RULES)
        for k, v in _items(found.get("text"))
        if isinstance(v, list)
    }
    fields = tuple(
        FieldRemark(tuple(f["path"]), f["rule"])
        for f in _list(found.get("fields"))
        if isinstance(f, dict)
        and f.get("rule") in RULES
        and isinstance(f.get("path"), list)
        and all(isinstance(p, str | int) and not isinstance(p, bool) for p in f["path"])
    )
    return ScrubRecord({k: v for k, v in keys.items() if v in RULES}, text, fields)


def _items(value: Any) -> list[tuple[str, Any]]:
    return list(value.items())[:MAX_REMARKS_READ] if isinstance(value, dict) else []


def _mapping(value: Any) -> dict[str, str]:
    return {k: v for k, v in _items(value) if isinstance(v, str)}


def _list(value: Any) -> list[Any]:
    return value[:MAX_REMARKS_READ] if isinstance(value, list) else []
