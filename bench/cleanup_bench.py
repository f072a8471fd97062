"""Cleanup benchmark: remove 30% of 1,000,000 stored events while ingestion runs.

Builds a SQLite database of ``--events`` events in ``--errors`` errors spread evenly over
``--days`` days (through the digest's batch write, as bench/ui_data.py), keeps a pristine
copy, then runs the ingest benchmark's open loop (``--rate`` events/s for ``--seconds``)
against ``tracebox serve`` on a fresh copy twice: once alone, once while ``tracebox
cleanup`` removes the events older than ``--retention-days`` (30% of them by default).
Prints the open loop's latency in both runs, what cleanup removed, how long it took
(wall and its process's CPU time), how long its transactions held the write lock
(longest, p99, p50, mean: the cleanup measures each from BEGIN IMMEDIATE to COMMIT),
the time its passive WAL checkpoints took (outside the lock, reported apart), and the
database file before and after. Not a test: run it by hand (see bench/README.md), e.g.

    .venv/bin/python bench/cleanup_bench.py --data-dir /tmp/cleanupbench --keep
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from harness import Server, wait_until_idle
from ingest_bench import LoadGenerator
from loadgen import PhaseResult
from ui_data import generate

from tracebox.config import Settings
from tracebox.store import Database, client_keys, projects

DB_NAME = "tracebox.sqlite3"
SERVE_CLEANUP_IDLE = {
    "TRACEBOX_RETENTION_DAYS": "3650",
    "TRACEBOX_RETENTION_EVENTS_PER_ERROR": str(10**6),
    "TRACEBOX_DICTIONARY_MIN_EVENTS": str(10**12),
    "TRACEBOX_CLEANUP_INTERVAL_SECONDS": str(86_400),
}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", type=Path, required=True, help="holds the pristine copy")
    p.add_argument("--keep", action="store_true", help="reuse the pristine database if present")
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--errors", type=int, default=10_000)
    p.add_argument("--days", type=int, default=100, help="events spread over this many days")
    p.add_argument("--retention-days", type=int, default=70, help="cleanup keeps these days")
    p.add_argument("--rate", type=float, default=1_000, help="open-loop events/s")
    p.add_argument("--seconds", type=float, default=120, help="open-loop duration")
    p.add_argument("--warmup", type=int, default=2_000)
    p.add_argument(
        "--runs",
        default="baseline,cleanup,baseline",
        help="runs in order; a name with 'cleanup' runs it meanwhile ('': only build)",
    )
    p.add_argument("--lock-target-ms", type=float, default=25.0)
    p.add_argument(
        "--write-mib-per-s",
        type=float,
        help="TRACEBOX_CLEANUP_WRITE_MIB_PER_S for the cleanup (default: the setting's)",
    )
    p.add_argument(
        "--stop-cleanup-after-load",
        action="store_true",
        help="SIGTERM the cleanup when the open loop ends (it reports what it did so far)",
    )
    p.add_argument("--wait-idle", type=float, default=0, metavar="SECONDS")
    p.add_argument("--json", type=Path)
    return p.parse_args()


@dataclass
class Run:
    name: str
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    p999_ms: float = 0.0
    max_ms: float = 0.0
    sent: int = 0
    acknowledged: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    file_bytes_before: int = 0
    file_bytes_after: int = 0
    cleanup: dict[str, Any] = field(default_factory=dict)
    cleanup_seconds: float = 0.0
    cleanup_cpu_seconds: float = 0.0  # user + system time of the cleanup process
    lock_target_ms: float = 0.0
    cleanup_within_load: bool = True


def build(args: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    """The pristine database (built once with --keep) and what it holds."""
    pristine = args.data_dir / "pristine"
    info_path = pristine / "info.json"
    if args.keep and info_path.exists():
        return pristine / DB_NAME, orjson.loads(info_path.read_bytes())
    shutil.rmtree(pristine, ignore_errors=True)
    pristine.mkdir(parents=True)
    settings = Settings(data_dir=pristine)
    db = Database(settings.resolved_database_url())
    db.migrate()
    with db.write() as conn:
        project = projects.create(conn, "bench/cleanup", "cleanup")
        projects.put_settings(conn, project.id, active=True, integrated=True)
        key = client_keys.create(conn, project.id)
    started = time.monotonic()
    now = time.time()
    for written in generate(
        db, project.id, errors_count=args.errors, events_count=args.events, days=args.days, now=now
    ):
        if written % 100_000 == 0:
            print(f"  {written:,} events ({time.monotonic() - started:.0f} s)", flush=True)
    db.dispose()
    _checkpoint(pristine / DB_NAME)
    info = {
        "project_id": project.id,
        "public_key": key.public_key,
        "built_at": now,
        "events": args.events,
        "errors": args.errors,
        "days": args.days,
        "build_seconds": time.monotonic() - started,
        "file_bytes": (pristine / DB_NAME).stat().st_size,
    }
    info_path.write_bytes(orjson.dumps(info))
    return pristine / DB_NAME, info


def _checkpoint(path: Path) -> int:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path.stat().st_size


def run(args: argparse.Namespace, name: str, pristine: Path, info: dict[str, Any]) -> Run:
    run_dir = args.data_dir / name
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    shutil.copyfile(pristine, run_dir / DB_NAME)
    result = Run(name, file_bytes_before=(run_dir / DB_NAME).stat().st_size)
    result.lock_target_ms = args.lock_target_ms
    loadgen = LoadGenerator(args.warmup + int(args.rate * args.seconds), seed=11)
    global_args = ["--data-dir", str(run_dir)]
    # serve runs a cleanup loop of its own: give it nothing to remove in any run, so the
    # only cleanup measured is the one started below.
    os.environ.update(SERVE_CLEANUP_IDLE)
    server = Server(global_args, 1, run_dir / "server.log")
    try:
        server.wait_healthy()
        loadgen.corpus_stats()
        loadgen.target(server.port, info["project_id"], info["public_key"])
        loadgen.run("closed", args.warmup, 32, 300)
        if args.wait_idle:
            wait_until_idle(args.wait_idle)
        # The cleanup is the only child process that ends before the load is over (the
        # load generator and the server end after): the children's CPU time is its own.
        children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        cleanup = _start_cleanup(args, global_args, run_dir) if "cleanup" in name else None
        started = time.monotonic()
        phase: PhaseResult = loadgen.run("open", args.rate, args.seconds, 256)
        if cleanup is not None:
            result.cleanup_within_load = cleanup.poll() is not None
            if args.stop_cleanup_after_load and not result.cleanup_within_load:
                cleanup.send_signal(signal.SIGTERM)
            out, _ = cleanup.communicate()
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            result.cleanup_cpu_seconds = (after.ru_utime - children_before.ru_utime) + (
                after.ru_stime - children_before.ru_stime
            )
            result.cleanup_seconds = time.monotonic() - started
            result.cleanup = orjson.loads(out)
    finally:
        loadgen.stop()
        server.stop()
    _latency(result, phase)
    result.file_bytes_after = _checkpoint(run_dir / DB_NAME)
    return result


def _start_cleanup(
    args: argparse.Namespace, global_args: list[str], run_dir: Path
) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.update(
        TRACEBOX_RETENTION_DAYS=str(args.retention_days),
        TRACEBOX_CLEANUP_LOCK_TARGET_MS=str(args.lock_target_ms),
        TRACEBOX_DICTIONARY_MIN_EVENTS=str(10**12),  # measure removal only
        TRACEBOX_RETENTION_EVENTS_PER_ERROR=str(10**6),  # by age only: exactly the oldest 30%
    )
    if args.write_mib_per_s is not None:
        env["TRACEBOX_CLEANUP_WRITE_MIB_PER_S"] = str(args.write_mib_per_s)
    cmd = [sys.executable, "-m", "tracebox", *global_args, "cleanup"]
    log = (run_dir / "cleanup.log").open("wb")
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, env=env)


def _latency(result: Run, phase: PhaseResult) -> None:
    ms = sorted(x * 1000 for x in phase.latency_from_schedule)
    cuts = statistics.quantiles(ms, n=1000)
    result.p50_ms, result.p99_ms, result.p999_ms = cuts[499], cuts[989], cuts[998]
    result.max_ms = ms[-1]
    result.sent, result.acknowledged = phase.sent, phase.acknowledged
    result.statuses = dict(phase.statuses)


def _cleanup_lines(r: Run, info: dict[str, Any]) -> list[str]:
    c, lock = r.cleanup, r.cleanup["lock"]
    removed = sum(c["removed"].values())
    n = max(1, lock["transactions"])
    return [
        f"           cleanup removed {removed:,} events ({removed / info['events']:.1%}) in "
        f"{c['seconds']:.1f} s ({r.cleanup_seconds:.1f} s wall): {removed / c['seconds']:,.0f} "
        f"events/s, CPU {r.cleanup_cpu_seconds:.1f} s "
        f"({r.cleanup_cpu_seconds * 1000 / max(1, removed):.3f} ms per event removed); "
        f"finished within the load: {r.cleanup_within_load}"
        + (" (stopped when it ended)" if c.get("interrupted") else ""),
        f"           write lock: {lock['transactions']:,} transactions, longest "
        f"{lock['longest_ms']:.1f} ms, p99 {lock.get('p99_ms', 0):.0f} ms, p50 "
        f"{lock.get('p50_ms', 0):.0f} ms, mean {lock['total_ms'] / n:.1f} ms, over the "
        f"{r.lock_target_ms:g} ms target: {lock.get('over_target', '?')}",
        f"           WAL checkpoints (passive, outside the lock): "
        f"{lock.get('checkpoints', '?')} taking {lock['checkpoint_ms'] / 1000:.1f} s of the "
        f"{c['seconds']:.1f} s",
        f"           disk writes (log pages and their checkpoint): "
        f"{lock.get('written_bytes', 0) / 2**20:,.0f} MiB, "
        f"{lock.get('written_bytes', 0) / 1024 / max(1, removed):.1f} KiB per event removed; "
        f"paused {lock.get('paced_ms', 0) / 1000:.1f} s longer to keep to "
        f"TRACEBOX_CLEANUP_WRITE_MIB_PER_S",
        f"           gave way to the digest (its spool backlog over "
        f"TRACEBOX_CLEANUP_YIELD_LAG_SECONDS): before {lock.get('yields', 0):,} transactions, "
        f"{lock.get('yielded_ms', 0) / 1000:.1f} s in all",
    ]


def render(runs: list[Run], info: dict[str, Any]) -> str:
    lines = [
        f"database: {info['events']:,} events in {info['errors']:,} errors over "
        f"{info['days']} days, {info['file_bytes'] / 2**30:.2f} GiB",
    ]
    for r in runs:
        lines.append(
            f"{r.name:>9}: open loop p50 {r.p50_ms:.1f} ms, p99 {r.p99_ms:.1f} ms, "
            f"p99.9 {r.p999_ms:.1f} ms, max {r.max_ms:.0f} ms; {r.acknowledged:,}/{r.sent:,} "
            f"acknowledged {r.statuses}"
        )
        if r.cleanup:
            lines += _cleanup_lines(r, info)
        lines.append(
            f"           database file {r.file_bytes_before / 2**30:.2f} GiB -> "
            f"{r.file_bytes_after / 2**30:.2f} GiB"
        )
    alone = [r.p99_ms for r in runs if not r.cleanup]
    for r in runs:
        if r.cleanup and alone:
            change = r.p99_ms / max(alone) - 1
            lines.append(f"p99 with cleanup vs the worse run without: {change:+.1%} (target: +20%)")
    return "\n".join(lines)


def main() -> int:
    args = parse_args()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    pristine, info = build(args)
    names = [name for name in args.runs.split(",") if name]
    runs = [run(args, f"{i}-{name}", pristine, info) for i, name in enumerate(names, 1)]
    print(render(runs, info))
    if args.json:
        data = {"info": info, "runs": [r.__dict__ for r in runs], "args": vars(args)}
        args.json.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2, default=str))
    if not args.keep:
        shutil.rmtree(args.data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
