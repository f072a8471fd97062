"""Scrub time per event on the benchmark corpus (issue 11's cost).

Builds the ingest benchmark's corpus (``corpus.py``: the same seed, sizes and users),
normalizes every event as the digest does, then times ``privacy.scrub`` alone with the
default settings, and with every optional rule on (anonymised IPs, additional and safe
fields), per event. Also times normalization and grouping on the same events, to put the
figure next to the rest of the digest's per-event CPU. Not a test: run it by hand,

    .venv/bin/python bench/privacy_bench.py --events 3000 --repeat 5
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import orjson
from prepare_stages import normalized, payloads

from tracebox import grouping, privacy
from tracebox.privacy import IpMode, PrivacySettings
from tracebox.protocol.event import normalize_event

ALL_RULES = PrivacySettings(
    sensitive_fields=("customer", "internal_ref"),
    safe_fields=("theme", "trace_id"),
    ip_mode=IpMode.ANONYMIZE,
)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=3000, help="events in the corpus")
    p.add_argument("--repeat", type=int, default=5, help="timed passes over the corpus")
    p.add_argument("--seed", type=int, default=7)
    return p.parse_args()


def events(count: int, seed: int) -> list[dict[str, Any]]:
    return [normalized(payload) for payload in payloads(count, seed)]


def per_event_us(
    work: Callable[[dict[str, Any]], object], batch: list[dict[str, Any]], n: int
) -> list[float]:
    """Microseconds per event, one figure per pass over ``batch``."""
    passes = []
    for _ in range(n):
        start = time.perf_counter()
        for event in batch:
            work(event)
        passes.append((time.perf_counter() - start) / len(batch) * 1e6)
    return passes


def main() -> None:
    args = parse_args()
    batch = events(args.events, args.seed)
    raws = [orjson.dumps(e) for e in batch]
    sizes = [len(r) for r in raws]
    print(f"{len(batch)} events, mean {statistics.fmean(sizes):,.0f} B normalized JSON")
    print(f"python {platform.python_version()}, {platform.processor() or platform.machine()}")
    scrubbed = [privacy.scrub(e) for e in batch]
    remarks = sum(len(e.get(privacy.REMARKS_KEY, [])) for e in scrubbed)
    print(f"default rules: {remarks / len(batch):.1f} values filtered per event")
    figures = {
        "scrub, default settings": lambda e: privacy.scrub(e),
        "scrub, every option on": lambda e: privacy.scrub(e, ALL_RULES),
        "normalize_event (for scale)": lambda e: normalize_event(
            orjson.loads(orjson.dumps(e)), received_at=1.0, client_ip=None
        ),
        "grouping.calculate (for scale)": grouping.calculate,
    }
    print(f"{'step':34} {'median us/event':>16} {'min':>8} {'max':>8}")
    for name, work in figures.items():
        passes = per_event_us(work, batch, args.repeat)
        print(f"{name:34} {statistics.median(passes):16.1f} {min(passes):8.1f} {max(passes):8.1f}")


if __name__ == "__main__":
    main()
