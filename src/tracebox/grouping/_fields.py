"""Defensive readers for the normalized event.

The normalizer guarantees the documented shape (docs/design.md "Normalized event"), but
grouping runs on every spooled record, including ones written by an older normalizer, so
a reader never raises: anything of an unexpected type is treated as missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TypeGuard

Fields = Mapping[str, Any]

_EMPTY: Fields = MappingProxyType({})


def _is_mapping(value: object) -> TypeGuard[Fields]:
    # Decoded JSON holds plain dicts; the exact type tests skip the slower ABC check.
    return type(value) is dict or (value is not None and isinstance(value, Mapping))


def text(obj: Fields, key: str) -> str | None:
    """The value at ``key`` when it is a non-empty string, else None."""
    value = obj.get(key)
    return value if isinstance(value, str) and value else None


def child(obj: Fields, key: str) -> Fields:
    """The mapping at ``key``, or an empty mapping when it is missing or not a mapping."""
    value = obj.get(key)
    return value if _is_mapping(value) else _EMPTY


def mappings(value: object) -> list[Fields]:
    """The mapping items of ``value`` in order when it is a list, else []."""
    if not isinstance(value, list):
        return []
    # _is_mapping inline: this runs over every frame of every event.
    return [item for item in value if type(item) is dict or isinstance(item, Mapping)]


def exceptions(event: Fields) -> list[Fields]:
    """The exception chain, oldest first and main (newest) last."""
    return mappings(child(event, "exception").get("values"))


def frames(container: Fields) -> list[Fields]:
    """Frames of ``container["stacktrace"]`` (an exception or the event), oldest first."""
    return mappings(child(container, "stacktrace").get("frames"))


def main_exception(event: Fields) -> Fields | None:
    """The exception the event is about: the last of the chain (Sentry's main exception)."""
    chain = exceptions(event)
    return chain[-1] if chain else None


def tag(event: Fields, name: str) -> str | None:
    """The first value of tag ``name``; tags are ``[[key, value], ...]`` (an object is accepted)."""
    tags = event.get("tags")
    if isinstance(tags, Mapping):
        tags = list(tags.items())
    if not isinstance(tags, list):
        return None
    for pair in tags:
        if isinstance(pair, list | tuple) and len(pair) == 2 and pair[0] == name:
            value = pair[1]
            return value if isinstance(value, str) else None
    return None
