"""Fail when the server's CPU per event grew by more than 15% against the committed figure.

Runs the quick ingestion benchmark (``make bench-quick``: SQLite, one web worker, a
closed loop of 15,000 events) ``--runs`` times, takes the lowest CPU per event of the
server's processes (web worker + digest) in the closed loop, and compares it with
``bench/cpu_baseline.json``. CPU time, not wall time: wall time swings with whatever
else runs on the machine; CPU per event moves much less (contention still inflates it,
hence the lowest of several runs). Exit status 0 when within the tolerance, 1 when not.

    .venv/bin/python bench/check_regression.py            # run and check (make bench-check)
    .venv/bin/python bench/check_regression.py --from out.json   # check a finished run
    .venv/bin/python bench/check_regression.py --update   # record a new baseline

A baseline holds only on the machine kind it was measured on (the CPU model is
recorded and compared); record one with ``--update`` after a deliberate change.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
BASELINE = HERE / "cpu_baseline.json"
TOLERANCE = 0.15  # the issue's: fail past +15% CPU per event
QUICK = ["--warmup", "500", "--events", "15000", "--rate", "0", "--max-seconds", "60"]
SERVER_PROCESSES = ("serve", "digest", "web worker")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--from", dest="runs_from", type=Path, nargs="*", help="existing --json outputs")
    p.add_argument("--runs", type=int, default=2, help="quick benchmark runs (the lowest counts)")
    p.add_argument("--baseline", type=Path, default=BASELINE)
    p.add_argument("--update", action="store_true", help="write the measured figure as baseline")
    return p.parse_args()


def quick_run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "quick.json"
        cmd = [sys.executable, str(HERE / "ingest_bench.py"), *QUICK, "--json", str(out)]
        subprocess.run(cmd, check=True, stdout=sys.stderr)
        data: dict[str, Any] = orjson.loads(out.read_bytes())
        return data


def cpu_per_event(run: dict[str, Any]) -> dict[str, float]:
    """CPU ms per acknowledged event in the closed loop: the server's processes, summed."""
    closed = next(p for p in run["phases"] if p["name"] == "closed")
    events = closed["acknowledged"]
    per: dict[str, float] = {}
    for name, seconds in closed["cpu_seconds"].items():
        if name.startswith(SERVER_PROCESSES):
            kind = "digest" if name.startswith("digest") else "web"  # and its prepare process
            per[kind] = per.get(kind, 0.0) + 1000 * seconds / events
    per["server"] = sum(per.values())
    per["other_processes"] = closed["cpu_seconds"].get("other processes", 0.0) / (
        closed["digested_seconds"] * run["machine"]["cpus"]
    )
    return per


def main() -> int:
    args = parse_args()
    runs = [orjson.loads(p.read_bytes()) for p in args.runs_from] if args.runs_from else []
    runs = runs or [quick_run() for _ in range(args.runs)]
    figures = [cpu_per_event(r) for r in runs]
    best = min(figures, key=lambda f: f["server"])
    for f in figures:
        print(
            f"server CPU {f['server']:.3f} ms/event (web {f.get('web', 0):.3f},"
            f" digest {f.get('digest', 0):.3f}); other processes {f['other_processes']:.0%}"
        )
    machine = runs[0]["machine"]
    if args.update:
        baseline = {
            "server_cpu_ms_per_event": round(best["server"], 4),
            "web_cpu_ms_per_event": round(best.get("web", 0.0), 4),
            "digest_cpu_ms_per_event": round(best.get("digest", 0.0), 4),
            "cpu_model": machine["cpu_model"],
            "cpus": machine["cpus"],
            "source": runs[0]["source"],
            "date": time.strftime("%Y-%m-%d"),
            "command": "bench/check_regression.py --update (ingest_bench.py "
            + " ".join(QUICK)
            + ")",
        }
        args.baseline.write_text(orjson.dumps(baseline, option=orjson.OPT_INDENT_2).decode() + "\n")
        print(f"baseline written to {args.baseline}")
        return 0
    return verdict(best, machine, orjson.loads(args.baseline.read_bytes()))


def verdict(best: dict[str, float], machine: dict[str, Any], baseline: dict[str, Any]) -> int:
    reference = baseline["server_cpu_ms_per_event"]
    limit = reference * (1 + TOLERANCE)
    if machine["cpu_model"] != baseline["cpu_model"]:
        print(
            f"warning: baseline measured on {baseline['cpu_model']}, this is {machine['cpu_model']}"
        )
    change = best["server"] / reference - 1
    line = f"lowest {best['server']:.3f} ms/event vs baseline {reference:.3f}"
    line += f" ({change:+.0%}; limit +{TOLERANCE:.0%})"
    if best["server"] > limit:
        print(f"FAIL: CPU per event grew: {line}")
        return 1
    print(f"OK: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
