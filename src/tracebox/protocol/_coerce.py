"""Small lenient readers shared by the payload normalizers.

Each returns a clean value or ``None``; none of them raises on odd-but-JSON input, so a
field of the wrong type is dropped instead of failing the whole payload.
"""

from __future__ import annotations

from typing import Any


def text(value: Any, max_chars: int) -> str | None:
    """``value`` as a non-empty string cut to ``max_chars``; numbers and booleans are
    stringified (as Relay's lenient strings); anything else gives ``None``."""
    if type(value) is str:  # the common case first
        return value[:max_chars] if value else None
    if isinstance(value, str):
        result = value
    elif isinstance(value, bool):
        result = "true" if value else "false"
    elif isinstance(value, int | float):
        result = str(value)
    else:
        return None
    return result[:max_chars] if result else None


def whole_number(value: Any) -> int | None:
    """``value`` if it is a JSON integer (not a boolean), else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def values_list(value: Any) -> list[Any]:
    """The items of a list or of a ``{"values": [...]}`` object (both shapes are sent by
    the SDKs for exception, breadcrumbs and threads); ``[]`` for anything else."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        inner = value.get("values")
        if isinstance(inner, list):
            return inner
    return []


def pairs(value: Any) -> list[tuple[Any, Any]]:
    """Key/value pairs of an object or of a ``[[key, value], ...]`` list (Relay's
    PairList); malformed pairs are skipped."""
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, list):
        return [(p[0], p[1]) for p in value if isinstance(p, list | tuple) and len(p) == 2]
    return []
