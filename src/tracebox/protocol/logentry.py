"""The event message: ``logentry``, or its legacy aliases ``sentry.interfaces.Message`` and
``message`` (a string, or an object as Java and PHP send), as Relay reads them."""

from __future__ import annotations

import re
from typing import Any

import orjson

MAX_MESSAGE_CHARS = 8192  # logentry message and formatted, as Relay

_SOURCES = ("logentry", "sentry.interfaces.Message", "message")

# printf-style (Python logging, PHP) and brace-style (Java SLF4J, .NET) placeholders. No
# space flag, so "100% sure" stays text; width and precision have at most 3 digits, so a
# template cannot ask for a gigabyte of padding.
_PLACEHOLDER = re.compile(
    r"%%|%(?:\((?P<name>[^)]*)\))?(?P<spec>[-+#0]*\d{0,3}(?:\.\d{0,3})?[sdifFeEgGxXorac])"
    r"|\{(?P<brace>\w*)\}"
)


def normalize_logentry(event: dict[str, Any]) -> dict[str, Any] | None:
    """``{"message", "params", "formatted"}`` from the first usable source, or ``None``.

    ``formatted`` is always set: taken as sent, else the template with its ``params``
    substituted, else the template. A plain string message is both ``message`` and
    ``formatted``.
    """
    for source in _SOURCES:
        entry = _logentry(event.get(source))
        if entry is not None:
            return entry
    return None


def _logentry(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str):
        text = value[:MAX_MESSAGE_CHARS]
        return {"message": text, "params": [], "formatted": text} if text else None
    if not isinstance(value, dict):
        return None
    message = value.get("message")
    message = message[:MAX_MESSAGE_CHARS] if isinstance(message, str) else ""  # bounds formatting
    params = value.get("params")
    params = params if isinstance(params, list | dict) else []
    formatted = value.get("formatted")
    if not isinstance(formatted, str) or not formatted:
        formatted = format_params(message, params) if params else message
    if not (message or formatted):
        return None
    return {
        "message": message or formatted[:MAX_MESSAGE_CHARS],
        "params": params,
        "formatted": formatted[:MAX_MESSAGE_CHARS],
    }


def format_params(template: str, params: list[Any] | dict[str, Any]) -> str:
    """``template`` with ``%s``/``%d``/``%(name)s`` and ``{}``/``{0}``/``{name}``
    placeholders replaced by ``params``. Never raises: a placeholder without a matching
    param stays as written, extra params are ignored."""
    position = 0

    def substitute(match: re.Match[str]) -> str:
        nonlocal position
        whole = match.group(0)
        if whole == "%%":
            return "%"
        name, brace, spec = match.group("name", "brace", "spec")
        key = name if name is not None else brace
        if key:  # %(name)s, {name} or {0}
            value = _lookup(params, key)
            if value is _MISSING:
                return whole
        elif isinstance(params, list) and position < len(params):  # %s or {}
            value = params[position]
            position += 1
        else:
            return whole
        return _render(value) if spec is None else _printf(spec, value)

    return _PLACEHOLDER.sub(substitute, template)


_MISSING = object()


def _lookup(params: list[Any] | dict[str, Any], key: str) -> Any:
    if isinstance(params, dict):
        return params.get(key, _MISSING)
    if key.isascii() and key.isdigit() and int(key) < len(params):
        return params[int(key)]
    return _MISSING


def _printf(spec: str, value: Any) -> str:
    if spec[-1] in "sra":  # repr/ascii make no sense for JSON values: render as text
        return ("%" + spec[:-1] + "s") % (_render(value),)
    try:
        return ("%" + spec) % (value,)
    except (TypeError, ValueError, OverflowError):
        return _render(value)


def _render(value: Any) -> str:
    """A param as text: strings as they are, other JSON values as JSON."""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)
