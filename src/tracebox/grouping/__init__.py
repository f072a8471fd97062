"""Grouping: which error an event belongs to.

Pure: no I/O, no clock, no randomness; the same event always gives the same grouping
under one ``GROUPING_VERSION``. The input is a normalized event (docs/design.md
"Normalized event"); anything of an unexpected type in it is treated as missing, so
``calculate`` never raises.

Strategies, first that contributes wins (Sentry's order, reference section 8):

1. the SDK's ``fingerprint`` (with ``{{ variables }}``), ``fingerprint.py``;
2. the exception chain: in-app frames, types, and the value of links without frames,
   ``exception.py``;
3. the log message, with variable parts replaced by placeholders, ``message.py``;
4. a fallback on level and logger, so every event gets a stable hash.

The first component names the strategy ("variant"), so two strategies never share a
hash; the hash is the md5 of the components joined by a NUL, which no component holds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from tracebox.grouping._fields import Fields, text
from tracebox.grouping.exception import exception_components
from tracebox.grouping.fingerprint import fingerprint_components, fingerprint_entries
from tracebox.grouping.message import message_components

__all__ = ["GROUPING_VERSION", "Grouping", "calculate"]

# Bump whenever a change to this package can change a hash or components. ``calculate``
# then also gives the previous version's hash (``fallback_hashes``), so an error grouped
# under the old version keeps receiving its events instead of being split.
# tracebox:2 - a frame without a function contributes its source line (frames.py).
GROUPING_VERSION = "tracebox:2"
PREVIOUS_VERSION = "tracebox:1"

_SEPARATOR = "\x00"


@dataclass(frozen=True)
class Grouping:
    """The grouping of one event.

    ``hash``: 32 lowercase hex, md5 of ``components`` joined by NUL; the error's key.
    ``version``: the ``GROUPING_VERSION`` that produced it.
    ``components``: the contributing values, variant name first, human-readable; stored
    as the error's fingerprint, e.g. ``["exception", "app.views:handle", "ValueError"]``.
    ``fallback_hashes``: the hashes earlier versions gave the same event, newest first,
    where they differ from ``hash``. The digest looks ``hash`` up first, then these; the
    first found names the event's error (an error made under an older version keeps its
    events), and a new error is keyed by ``hash``.
    """

    hash: str
    version: str
    components: list[str] = field(hash=False)
    fallback_hashes: tuple[str, ...] = ()


def calculate(event: Mapping[str, Any]) -> Grouping:
    """The grouping of a normalized event. Never raises."""
    if type(event) is not dict and not isinstance(event, Mapping):
        event = {}
    lines_used: list[bool] = []
    components, digest = _components_and_hash(event, context_lines=True, lines_used=lines_used)
    fallback: tuple[str, ...] = ()
    # No frame contributed its source line: the previous version's hash is this one (the
    # only difference between the versions), without computing it again.
    if lines_used:
        _, previous = _components_and_hash(event, context_lines=False)
        fallback = () if previous == digest else (previous,)
    return Grouping(
        hash=digest, version=GROUPING_VERSION, components=components, fallback_hashes=fallback
    )


def _components_and_hash(
    event: Fields, *, context_lines: bool, lines_used: list[bool] | None = None
) -> tuple[list[str], str]:
    """``context_lines=False``: as ``PREVIOUS_VERSION`` grouped. ``lines_used``: see
    ``frames.stack_components``."""
    entries = fingerprint_entries(event)
    default = partial(default_components, context_lines=context_lines, lines_used=lines_used)
    if entries is None:
        components = default(event)
    else:
        components = fingerprint_components(entries, event, default)
    data = _encode(components)
    if data is None:
        components = [_storable(part) for part in components]
        data = _encode(components) or b""
    return components, hashlib.md5(data, usedforsecurity=False).hexdigest()


def default_components(
    event: Fields, *, context_lines: bool = True, lines_used: list[bool] | None = None
) -> list[str]:
    """The components of Sentry's default grouping, without any SDK fingerprint."""
    return (
        exception_components(event, context_lines=context_lines, lines_used=lines_used)
        or message_components(event)
        or _fallback(event)
    )


def _fallback(event: Fields) -> list[str]:
    # An event with neither exception nor message (Sentry titles it "<unlabeled event>").
    level = text(event, "level") or "<no-level>"
    logger = text(event, "logger") or "<no-logger>"
    return ["fallback", "<unlabeled>", level, logger]


def _encode(components: list[str]) -> bytes | None:
    """The hashed bytes; None when a component holds NUL (the separator) or a lone
    surrogate (not UTF-8, and not storable as JSON either)."""
    joined = _SEPARATOR.join(components)
    if joined.count(_SEPARATOR) != len(components) - 1:
        return None
    try:
        return joined.encode("utf-8")
    except UnicodeEncodeError:
        return None


def _storable(part: str) -> str:
    """``part`` without NUL and with lone surrogates replaced; only a broken client
    sends either."""
    return part.replace(_SEPARATOR, "").encode("utf-8", "replace").decode("utf-8")
