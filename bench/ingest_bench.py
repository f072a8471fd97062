"""Ingestion benchmark: ``tracebox serve`` on SQLite or PostgreSQL under realistic load.

Starts the server, sends gzip envelopes (5-20 KB events, about 1,000 distinct stack
traces, 5,000 users) from a separate process, and prints events/s acknowledged and
digested, p50/p99 latency, the peak RSS of all server processes and the bytes stored
per event. Exits non-zero if the database does not hold exactly the acknowledged events.
Not a test: run it by hand (see bench/README.md), e.g.

    .venv/bin/python bench/ingest_bench.py
    .venv/bin/python bench/ingest_bench.py --database-url postgresql://postgres@127.0.0.1:55433/bench
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import alert_rules
import orjson
from harness import (
    RssSampler,
    Server,
    cpu_seconds,
    machine_busy_seconds,
    postgres_pids,
    tracebox,
    wait_until_idle,
)
from loadgen import PhaseResult, serve_commands
from render import render
from report import Report, summarize
from sqlalchemy.engine import make_url
from storage import Counter, footprint

from tracebox.config import Settings
from tracebox.privacy import PrivacySettings
from tracebox.store import Database
from tracebox.store import privacy as privacy_store


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--database-url", default="", help="default: SQLite in the data dir")
    p.add_argument("--data-dir", type=Path, help="default: a temporary directory, removed")
    p.add_argument("--workers", type=int, default=1, help="web worker processes")
    p.add_argument("--concurrency", type=int, default=32, help="closed-loop connections")
    p.add_argument("--events", type=int, default=30_000, help="closed-loop events (0: skip)")
    p.add_argument("--max-seconds", type=float, default=300, help="closed-loop time bound")
    p.add_argument("--warmup", type=int, default=1_000, help="events sent before measuring")
    p.add_argument("--rate", type=float, default=1_000, help="open-loop events/s (0: skip)")
    p.add_argument("--rate-seconds", type=float, default=20, help="open-loop duration")
    p.add_argument("--max-conns", type=int, default=256, help="open-loop connection cap")
    p.add_argument("--digest-timeout", type=float, default=300, help="seconds to wait")
    p.add_argument("--seed", type=int, default=7, help="corpus content seed")
    p.add_argument(
        "--privacy-off",
        action="store_true",
        help="turn the project's data scrubbing off (the baseline of issue 11's cost)",
    )
    p.add_argument(
        "--wait-idle",
        type=float,
        default=0,
        metavar="SECONDS",
        help="first wait up to this long for the machine to be idle (shared machines)",
    )
    p.add_argument(
        "--alert-rules", type=int, default=0, help="active alert rules on the project (issue 14)"
    )
    p.add_argument("--json", type=Path, help="also write the figures here")
    p.add_argument("--profile", type=Path, help="write a py-spy raw profile of one phase")
    p.add_argument("--profile-phase", choices=("closed", "open"), default="closed")
    return p.parse_args()


class LoadGenerator:
    """The load generator process, driven over a pipe."""

    def __init__(self, events: int, seed: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.pipe, child = context.Pipe()
        settings = {"events": events, "seed": seed}
        # Not a daemon: it builds the corpus with a process pool of its own.
        self.proc = context.Process(target=serve_commands, args=(child, settings))
        self.proc.start()

    def corpus_stats(self) -> dict[str, float]:
        stats: dict[str, float] = self.pipe.recv()
        return stats

    def target(self, port: int, project_id: int, public_key: str) -> None:
        self.pipe.send((port, project_id, public_key))

    def run(self, *command: Any) -> PhaseResult:
        self.pipe.send(command)
        result: PhaseResult = self.pipe.recv()
        return result

    def stop(self) -> None:
        with contextlib.suppress(OSError):  # it may be gone already
            self.pipe.send(None)
        self.proc.join(30)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()


@dataclass
class Live:
    """What a run drives and watches while the server is up."""

    server: Server
    loadgen: LoadGenerator
    counter: Counter
    rss: RssSampler


class Bench:
    def __init__(self, args: argparse.Namespace, data_dir: Path) -> None:
        self.args = args
        self.data_dir = data_dir
        self.global_args = ["--data-dir", str(data_dir)]
        if args.database_url:
            self.global_args += ["--database-url", args.database_url]
        settings = Settings(data_dir=data_dir, database_url=args.database_url)
        self.url = settings.resolved_database_url()
        self.database_name = "" if self.url.startswith("sqlite") else make_url(self.url).database
        self.report = Report(args, self.url, data_dir)

    def run(self) -> int:
        args = self.args
        total = args.warmup + args.events + int(args.rate * args.rate_seconds)
        loadgen = LoadGenerator(total, args.seed)  # builds the corpus meanwhile
        try:
            tracebox(self.global_args, "migrate")  # the other commands need a migrated database
            project = orjson.loads(tracebox(self.global_args, "project", "create", _path()))
            if args.privacy_off:
                _privacy_off(self.url, project["id"])
            key = orjson.loads(tracebox(self.global_args, "key", "create", str(project["id"])))
            alert_rules.create(self.url, project["id"], args.alert_rules)
            self.report.baseline = footprint(self.url)
            counter = self._serve(loadgen, project["id"], key["public_key"])
        finally:
            loadgen.stop()
        self.report.final_events = counter.events()
        counter.dispose()
        self.report.stored = footprint(self.url)
        print(render(self.report))
        if args.json:
            args.json.write_text(orjson.dumps(self.report.as_json(), option=2).decode())
        return 0 if self.report.consistent() else 1

    def _serve(self, loadgen: LoadGenerator, project_id: int, public_key: str) -> Counter:
        """Start the server, run the phases, stop the server; return the event counter."""
        server = Server(self.global_args, self.args.workers, self.data_dir / "server.log")
        live = Live(server, loadgen, Counter(self.url, project_id), RssSampler(server.proc.pid))
        self.report.rss = live.rss
        try:
            server.wait_healthy()
            self.report.corpus = loadgen.corpus_stats()
            loadgen.target(server.port, project_id, public_key)
            if self.args.wait_idle:
                self.report.idle_before = wait_until_idle(self.args.wait_idle)
            live.rss.start()
            live.counter.start()
            self._phases(live)
            self.report.errors = live.counter.errors()
            self.report.counted = live.counter.counted()
        finally:
            live.rss.stop()
            live.counter.stop()
            server.stop()
        return live.counter

    def _phases(self, live: Live) -> None:
        args = self.args
        if args.warmup:
            self._phase(live, "warmup", ("closed", args.warmup, args.concurrency, args.max_seconds))
        if args.events:
            with _profiling(args, "closed", live.server.proc.pid):
                command = ("closed", args.events, args.concurrency, args.max_seconds)
                self._phase(live, "closed", command)
        if args.rate and args.rate_seconds:
            with _profiling(args, "open", live.server.proc.pid):
                self._phase(live, "open", ("open", args.rate, args.rate_seconds, args.max_conns))

    def _phase(self, live: Live, name: str, command: tuple[Any, ...]) -> None:
        """Run one load phase, then wait until the database holds every event it got
        acknowledged. CPU seconds are counted per process from the start of the phase
        to the moment the database count was reached."""
        before = self.report.acknowledged
        server_cpu, bench_cpu = cpu_seconds(live.server.pids()), time.process_time()
        postgres = postgres_pids(self.database_name) if self.database_name else []
        postgres_cpu = cpu_seconds(postgres)
        busy, steal = machine_busy_seconds()
        batches = live.server.digest_batches()
        result = live.loadgen.run(*command)
        target = before + result.acknowledged
        reached_at, count = live.counter.wait_for(target, self.args.digest_timeout)
        batches_after = live.server.digest_batches()
        digest = (batches_after[0] - batches[0], batches_after[1] - batches[1])
        cpu = {
            live.rss.names.get(pid, str(pid)): used - server_cpu.get(pid, 0.0)
            for pid, used in cpu_seconds(live.server.pids()).items()
        }
        cpu["load generator"] = result.cpu_seconds
        cpu["bench samplers"] = time.process_time() - bench_cpu
        if self.database_name:
            after = cpu_seconds(postgres_pids(self.database_name))
            cpu["postgres"] = sum(used - postgres_cpu.get(pid, 0.0) for pid, used in after.items())
        busy_after, steal_after = machine_busy_seconds()
        # Whatever else ran on the machine meanwhile: it took CPU from the server.
        cpu["other processes"] = busy_after - busy - sum(cpu.values())
        cpu["stolen by hypervisor"] = steal_after - steal
        phase = summarize(name, result, before, reached_at, count, live.counter, cpu, live.rss)
        phase.digest_batches, phase.digest_records = digest
        self.report.phases.append(phase)
        if count < target:
            raise SystemExit(
                f"FAIL: {name}: the errors count {count} events after "
                f"{self.args.digest_timeout:.0f} s, {target} were acknowledged"
            )


def _path() -> str:
    """A new project's path: runs can share a database."""
    return f"bench/ingest-{time.strftime('%Y%m%d-%H%M%S')}"


@contextlib.contextmanager
def _profiling(args: argparse.Namespace, phase: str, pid: int) -> Iterator[None]:
    """py-spy (raw format) on the server's processes while ``phase`` runs, if asked."""
    if args.profile is None or args.profile_phase != phase:
        yield
        return
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    cmd = [py_spy, "record", "--pid", str(pid), "--subprocesses", "--nonblocking"]
    cmd += ["--format", "raw", "--rate", "50", "-o", str(args.profile)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # let it attach before the load starts
    try:
        yield
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)


def main() -> int:
    args = parse_args()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="tracebox-bench-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        return Bench(args, data_dir).run()
    finally:
        if args.data_dir is None:
            shutil.rmtree(data_dir, ignore_errors=True)


def _privacy_off(url: str, project_id: int) -> None:
    db = Database(url)
    try:
        with db.write() as conn:
            privacy_store.put(conn, project_id, PrivacySettings(scrub_data=False))
    finally:
        db.dispose()


if __name__ == "__main__":
    sys.exit(main())
