"""Timestamps as the API shows them: ISO 8601 in UTC with milliseconds, as GitLab's."""

from __future__ import annotations

import datetime as dt


def iso(ts: float) -> str:
    moment = dt.datetime.fromtimestamp(ts, dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def iso_or_none(ts: float | None) -> str | None:
    return None if ts is None else iso(ts)


def iso_seconds(ts: float) -> str:
    """Sentry's form: ``2026-01-01T12:00:00Z`` (microseconds when present)."""
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat().replace("+00:00", "Z")
