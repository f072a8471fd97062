"""Severity levels as Relay's ``Level::from_str`` reads them."""

from __future__ import annotations

from typing import Any

LEVELS = ("fatal", "error", "warning", "info", "debug")

_NAMES = {level: level for level in LEVELS} | {
    "log": "info",
    "critical": "fatal",
    "warn": "warning",
}
_PYTHON_LEVELS = {10: "debug", 20: "info", 30: "warning", 40: "error", 50: "fatal"}  # logging


def normalize_level(value: Any, default: str) -> str:
    """One of ``LEVELS`` from a name or alias (any case) or a Python logging number (as
    a number or a string); ``default`` for anything else."""
    if type(value) is str:  # the common case: a level as the SDKs write it, "error"
        found = _NAMES.get(value)
        if found is not None:
            return found
    if isinstance(value, str):
        name = value.strip().lower()
        if name in _NAMES:
            return _NAMES[name]
        if name.isascii() and name.isdigit():
            return _PYTHON_LEVELS.get(int(name), default)
        return default
    if isinstance(value, int | float) and not isinstance(value, bool) and value in _PYTHON_LEVELS:
        return _PYTHON_LEVELS[int(value)]  # 40.0 is 40
    return default
