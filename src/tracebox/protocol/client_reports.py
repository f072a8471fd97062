"""``client_report`` items: what an SDK discarded before sending, by reason and data
category (develop docs "Client Reports"), so "why don't I see my errors?" has an answer.
Pure.

``{"timestamp": ..., "discarded_events": [{"reason", "category", "quantity"}]}``; older
SDKs also send ``rate_limited_events``, ``filtered_events`` and
``filtered_sampling_events`` lists of the same entries. Reasons and categories outside
the documented sets are counted as ``other`` / ``unknown``, so a client cannot create a
counter per made-up name.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

MAX_ENTRIES = 100  # per report; a real one holds a few
MAX_QUANTITY = 2**31 - 1
REASONS = frozenset(
    {
        "queue_overflow", "cache_overflow", "buffer_overflow", "ratelimit_backoff",
        "network_error", "sample_rate", "before_send", "event_processor",
        "insufficient_data", "backpressure", "send_error", "internal_sdk_error",
        "ignored", "invalid", "too_large",
    }
)  # fmt: skip
CATEGORIES = frozenset(
    {
        "default", "error", "transaction", "security", "attachment", "session", "profile",
        "profile_chunk", "profile_chunk_ui", "replay", "span", "monitor", "log_item",
        "log_byte", "feedback", "user_report_v2", "metric_bucket", "internal",
        "trace_metric", "profile_duration", "profile_duration_ui",
    }
)  # fmt: skip
OTHER_REASON = "other"
UNKNOWN_CATEGORY = "unknown"
_LISTS = ("discarded_events", "rate_limited_events", "filtered_events", "filtered_sampling_events")
_IMPLIED_REASONS = {
    "rate_limited_events": "ratelimit_backoff",
    "filtered_events": "event_processor",
    "filtered_sampling_events": "sample_rate",
}


def discarded(raw: Any) -> Counter[tuple[str, str]]:
    """Quantities per (category, reason) of one report; empty when it holds none."""
    counts: Counter[tuple[str, str]] = Counter()
    if not isinstance(raw, dict):
        return counts
    seen = 0
    for name in _LISTS:
        entries = raw.get(name)
        if not isinstance(entries, list):
            continue
        for entry in entries[: MAX_ENTRIES - seen]:
            seen += 1
            found = _entry(entry, _IMPLIED_REASONS.get(name))
            if found is not None:
                key, quantity = found
                counts[key] += quantity
    return counts


def _entry(entry: Any, implied: str | None) -> tuple[tuple[str, str], int] | None:
    if not isinstance(entry, dict):
        return None
    quantity = entry.get("quantity")
    if type(quantity) is not int or not 0 < quantity <= MAX_QUANTITY:
        return None
    reason = entry.get("reason", implied)
    category = entry.get("category")
    reason = reason if reason in REASONS else OTHER_REASON
    category = category if category in CATEGORIES else UNKNOWN_CATEGORY
    return (category, reason), quantity
