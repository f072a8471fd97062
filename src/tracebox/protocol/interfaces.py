"""Event interfaces with nested structure: exceptions, stack traces, threads, breadcrumbs.

Each reader keeps the documented keys of the right type and drops the rest (docs/design.md
"Normalized event"). These run for every frame of every event, so they look keys up in
one table instead of testing each key, and never copy what they keep as is.
"""

from __future__ import annotations

from math import isfinite
from typing import Any

from tracebox.protocol._coerce import text, values_list, whole_number
from tracebox.protocol.levels import normalize_level
from tracebox.protocol.timestamps import parse_timestamp

MAX_FRAMES = 250  # as Sentry: a longer stack trace keeps its first and last halves
MAX_BREADCRUMBS = 100  # as Sentry (the SDKs' max_breadcrumbs default): the newest are kept
MAX_VALUE_CHARS = 8192  # exception value and breadcrumb message, as Relay's message limit

_STR, _INT, _BOOL, _LINES, _OBJECT, _ADDR = range(6)
_FRAME_KEYS = {
    "filename": _STR,
    "abs_path": _STR,
    "function": _STR,
    "raw_function": _STR,
    "module": _STR,
    "package": _STR,
    "platform": _STR,
    "context_line": _STR,
    "lineno": _INT,
    "colno": _INT,
    "in_app": _BOOL,
    "pre_context": _LINES,
    "post_context": _LINES,
    "vars": _OBJECT,
    "instruction_addr": _ADDR,
    "symbol_addr": _ADDR,
    "image_addr": _ADDR,
}
# The type of a value of each kind that is kept unchanged (an address sent as a number is
# rewritten in hex), and so of each frame key's value in a frame kept as sent.
_UNCHANGED_TYPE = {_STR: str, _INT: int, _BOOL: bool, _LINES: list, _OBJECT: dict, _ADDR: str}
_CLEAN_TYPES: dict[str, type[Any]] = {
    key: _UNCHANGED_TYPE[kind] for key, kind in _FRAME_KEYS.items()
}
_STR_ONLY = frozenset({str})
# A frame needs at least one of these to say where it is (as Relay's frame validation).
_FRAME_LOCATION = ("filename", "abs_path", "function", "module", "instruction_addr")


def normalize_exceptions(value: Any) -> dict[str, Any] | None:
    """``{"values": [...]}`` from a list, ``{values}``, or one bare exception object
    (old raven clients); order is kept (oldest first, main last). ``None`` if empty."""
    if isinstance(value, dict) and "values" not in value:
        value = [value]
    exceptions = [e for e in map(_exception, values_list(value)) if e is not None]
    return {"values": exceptions} if exceptions else None


def _exception(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    exception: dict[str, Any] = {}
    for key, limit in (("type", MAX_VALUE_CHARS), ("value", MAX_VALUE_CHARS), ("module", 1024)):
        found = text(raw.get(key), limit)
        if found is not None:
            exception[key] = found
    if isinstance(raw.get("mechanism"), dict):
        exception["mechanism"] = raw["mechanism"]
    thread_id = raw.get("thread_id")
    if isinstance(thread_id, str) or whole_number(thread_id) is not None:
        exception["thread_id"] = thread_id
    stacktrace = normalize_stacktrace(raw.get("stacktrace"))
    if stacktrace is not None:
        exception["stacktrace"] = stacktrace
    # As Relay, an exception needs a type or a value; a bare stack trace still says much.
    return exception if exception.keys() & {"type", "value", "stacktrace"} else None


def normalize_stacktrace(value: Any) -> dict[str, Any] | None:
    """``{"frames": [...]}`` keeping at most ``MAX_FRAMES`` valid frames, or ``None``."""
    if not isinstance(value, dict) or not isinstance(value.get("frames"), list):
        return None
    raw_frames: list[Any] = value["frames"]
    if len(raw_frames) > MAX_FRAMES:
        half = MAX_FRAMES // 2
        raw_frames = raw_frames[:half] + raw_frames[-half:]
    if all(map(_is_clean_frame, raw_frames)):  # the common case: the list is kept as sent
        frames = raw_frames
    else:
        frames = [f for f in map(_frame, raw_frames) if f is not None]
    return {"frames": frames} if frames else None


def _frame(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    # Most frames are already clean: keeping one as sent is what the copy would give.
    return raw if _is_clean_frame(raw) else _cleaned_frame(raw)


def _is_clean_frame(raw: Any) -> bool:
    """Whether ``_frame(raw)`` would equal ``raw``: an object whose every key is a frame
    key, whose every value has the exact type kept for that key (no None, no number for
    an address) and is kept unchanged (no empty string, negative line or non-string line
    of context), and which says where it is. ``type() is`` rejects booleans as numbers,
    and subclasses, which the slow path then reads."""
    if type(raw) is not dict:
        return False
    types = _CLEAN_TYPES
    try:  # a subscript is cheaper than a get() call; an unknown key is a KeyError
        for key, value in raw.items():
            kind = types[key]
            if type(value) is not kind:
                return False
            if kind is str:
                if not value:
                    return False
            elif kind is int:
                if value < 0:
                    return False
            elif kind is list and not _STR_ONLY.issuperset(map(type, value)):
                return False
    except KeyError:
        return False
    # Most frames have a filename: one lookup instead of isdisjoint()'s call.
    return "filename" in raw or not raw.keys().isdisjoint(_FRAME_LOCATION)


def _cleaned_frame(raw: dict[str, Any]) -> dict[str, Any] | None:
    frame: dict[str, Any] = {}
    kind_of = _FRAME_KEYS.get
    # Hot: one test per kind, the commonest (strings) first; None values are never kept.
    for key, value in raw.items():
        kind = kind_of(key)
        if kind == _STR:
            if isinstance(value, str) and value:
                frame[key] = value
        elif kind is None or value is None:
            continue
        elif kind == _INT:
            if type(value) is int and value >= 0:  # type(), not isinstance: no booleans
                frame[key] = value
        elif kind == _BOOL:
            if value is True or value is False:
                frame[key] = value
        elif kind == _LINES:
            if isinstance(value, list):
                frame[key] = [line if isinstance(line, str) else "" for line in value]
        elif kind == _OBJECT:
            if isinstance(value, dict):
                frame[key] = value
        elif isinstance(value, str):  # an address: a hex string, or a number some SDKs send
            frame[key] = value
        elif type(value) is int and value >= 0:
            frame[key] = hex(value)
    return None if frame.keys().isdisjoint(_FRAME_LOCATION) else frame


def normalize_threads(value: Any) -> dict[str, Any] | None:
    """``{"values": [...]}`` from a list or ``{values}``; ``None`` if empty."""
    threads = [t for t in map(_thread, values_list(value)) if t]
    return {"values": threads} if threads else None


def _thread(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    thread: dict[str, Any] = {}
    thread_id = raw.get("id")
    if isinstance(thread_id, str) or whole_number(thread_id) is not None:
        thread["id"] = thread_id
    for key in ("name", "state"):
        if isinstance(raw.get(key), str):
            thread[key] = raw[key]
    for key in ("crashed", "current", "main"):
        if isinstance(raw.get(key), bool):
            thread[key] = raw[key]
    if isinstance(raw.get("held_locks"), dict):
        thread["held_locks"] = raw["held_locks"]
    stacktrace = normalize_stacktrace(raw.get("stacktrace"))
    if stacktrace is not None:
        thread["stacktrace"] = stacktrace
    return thread


def normalize_breadcrumbs(value: Any, default_timestamp: float) -> dict[str, Any] | None:
    """``{"values": [...]}`` holding the newest ``MAX_BREADCRUMBS`` crumbs, each with a
    float ``timestamp`` (``default_timestamp`` when missing or unreadable)."""
    crumbs = []
    for raw in values_list(value)[-MAX_BREADCRUMBS:]:
        crumb = _crumb(raw, default_timestamp)
        if crumb:
            crumbs.append(crumb)
    return {"values": crumbs} if crumbs else None


def _crumb(raw: Any, default_timestamp: float) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    # Hot (every crumb of every event): ``in`` and ``[]`` for the optional keys rather than
    # get() calls, and text()'s first case (a string, cut) inline for the strings most
    # crumbs hold.
    timestamp = raw.get("timestamp")
    if type(timestamp) is not float or not isfinite(timestamp):  # else: as parse_timestamp
        timestamp = parse_timestamp(timestamp)
    crumb_type = raw.get("type")
    level = raw.get("level")
    crumb: dict[str, Any] = {
        "timestamp": default_timestamp if timestamp is None else timestamp,
        "type": (crumb_type[:64] if type(crumb_type) is str else text(crumb_type, 64)) or "default",
        "level": "info" if level is None else normalize_level(level, "info"),
    }
    if "category" in raw:
        category = raw["category"]
        found = category[:256] if type(category) is str else text(category, 256)
        if found:
            crumb["category"] = found
    if "message" in raw:
        message = raw["message"]
        found = (
            message[:MAX_VALUE_CHARS] if type(message) is str else text(message, MAX_VALUE_CHARS)
        )
        if found:
            crumb["message"] = found
    if "data" in raw and isinstance(raw["data"], dict):
        crumb["data"] = raw["data"]
    return crumb
