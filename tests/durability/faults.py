"""Run every fault scenario in one go and print the table of docs/deployment.md.

    .venv/bin/python -m tests.durability.faults            # all, about 7 minutes
    .venv/bin/python -m tests.durability.faults --only digest two   # names containing these

Each scenario starts its own ``tracebox serve`` (and, where it needs one, its own
PostgreSQL cluster) in a temporary directory, and stops everything it started. Exits 1
if any acknowledged envelope was lost or counted twice, or any expectation failed.
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.durability import scenarios
from tests.durability.scenarios import FaultResult

SCENARIOS: dict[str, Callable[[Path], FaultResult]] = {
    "database": scenarios.database_outage,
    "disk": scenarios.disk_full,
    "cap": scenarios.small_spool_cap,
    "digest": scenarios.digest_crash,
    "node": scenarios.node_crash,
    "sigterm": functools.partial(scenarios.graceful_stop, whole_group=False),
    "sigterm-group": functools.partial(scenarios.graceful_stop, whole_group=True),
    "two-nodes": scenarios.two_nodes,
    "second-instance": scenarios.second_instance,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=[], help="scenario names containing these")
    args = parser.parse_args()
    chosen = {n: s for n, s in SCENARIOS.items() if not args.only or any(o in n for o in args.only)}
    results = []
    for name, scenario in chosen.items():
        print(f"running {name} ...", file=sys.stderr, flush=True)
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix=f"tracebox-fault-{name}-") as work:
            try:
                result = scenario(Path(work))
            except scenarios.SmallDiskUnavailable as e:
                result = FaultResult(name, notes=[f"not run: {e}"])
        print(f"  done in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
        results.append(result)
    print(table(results))
    failed = [r for r in results if r.lost or r.duplicated or r.notes]
    return 1 if failed else 0


def table(results: list[FaultResult]) -> str:
    lines = [
        "| fault | requests acknowledged | stored | lost | duplicated | recovery | notes |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for r in results:
        recovery = f"{r.recovery_seconds:.1f} s ({r.recovery})"
        notes = "; ".join(r.notes) or "all expectations held"
        lines.append(
            f"| {r.fault} | {r.acknowledged:,} | {r.stored:,} | {r.lost} | {r.duplicated} "
            f"| {recovery} | {notes} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
