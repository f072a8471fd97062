"""Bar charts as data for server-rendered SVG (pure): the 24-hour timeline of the error
list and the 24-hour and 30-day charts of the details page."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from tracebox.tracking.models import Bucket


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    count: int
    label: str  # the bar's tooltip and accessible text


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    bars: list[Bar]
    total: int
    peak: int
    summary: str  # one sentence for screen readers


def bar_chart(
    buckets: Sequence[Bucket],
    *,
    width: int,
    height: int,
    daily: bool = False,
    gap: float = 1.0,
    noun: str = "event",
) -> Chart:
    """Bars scaled to the busiest bucket; an empty bucket keeps a 1-unit stub, so the
    time axis stays readable."""
    peak = max((b.count for b in buckets), default=0)
    slot = width / max(len(buckets), 1)
    bars = []
    for i, bucket in enumerate(buckets):
        h = max(1.0, (height - 1) * bucket.count / peak) if peak and bucket.count else 1.0
        bars.append(
            Bar(
                x=round(i * slot + gap / 2, 2),
                y=round(height - h, 2),
                width=round(max(slot - gap, 1.0), 2),
                height=round(h, 2),
                count=bucket.count,
                label=_label(bucket, daily, noun),
            )
        )
    total = sum(b.count for b in buckets)
    span = f"{len(buckets)} {'days' if daily else 'hours'}"
    nouns = noun if total == 1 else f"{noun}s"
    summary = (
        f"{total:,} {nouns} in the last {span}; busiest {'day' if daily else 'hour'}: {peak:,}"
    )
    return Chart(width, height, bars, total, peak, summary)


def _label(bucket: Bucket, daily: bool, noun: str) -> str:
    when = dt.datetime.fromtimestamp(bucket.time, dt.UTC)
    stamp = when.strftime("%Y-%m-%d") if daily else when.strftime("%Y-%m-%d %H:00 UTC")
    return f"{stamp}: {bucket.count:,} {noun}{'' if bucket.count == 1 else 's'}"
