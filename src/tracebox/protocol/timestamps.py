"""Timestamps as the SDKs send them: unix seconds or RFC 3339 strings."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

MAX_SECS_IN_FUTURE = 60.0  # as Relay max_secs_in_future
MAX_SECS_IN_PAST = 30 * 24 * 3600.0  # as Relay max_secs_in_past (events)


def parse_timestamp(value: Any) -> float | None:
    """Unix seconds from a number or an RFC 3339 / ISO 8601 string (a naive one is UTC, as
    Relay); ``None`` when ``value`` is neither or is not a finite time."""
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, int | float):
            seconds = float(value)
        elif isinstance(value, str):
            seconds = _parse_text(value)
        else:
            return None
    except (ValueError, OverflowError, OSError):
        return None
    return seconds if math.isfinite(seconds) else None


def _parse_text(value: str) -> float:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return float(value)  # "1304358096.0": some SDKs stringify unix seconds
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def clamp_timestamp(seconds: float | None, received_at: float) -> float:
    """``seconds``, or ``received_at`` when it is missing, more than 60 s in the future or
    more than 30 days in the past (as Relay's event timestamp clamping)."""
    if seconds is None:
        return received_at
    if seconds > received_at + MAX_SECS_IN_FUTURE or seconds < received_at - MAX_SECS_IN_PAST:
        return received_at
    return seconds
