"""The ingest path under two ASGI servers: uvicorn (uvloop + httptools, what ``tracebox
serve`` runs) and Granian (``pip install granian``), same app, same load.

Only the web server runs (no digest: the spool takes the events), with one worker
process, so the figure is the web worker's CPU per event and what it acknowledges.
Each server gets the same phases: a warm-up, a closed loop, an open loop at ``--rate``.
``floor`` is uvicorn serving ``null_app.py`` instead of Tracebox: what the HTTP server,
the event loop and the sockets cost alone.

    .venv/bin/python bench/http_server_bench.py --servers uvicorn granian --rounds 2
    .venv/bin/python bench/http_server_bench.py --servers uvicorn floor --rounds 2
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import orjson
from harness import (
    cpu_seconds,
    free_port,
    machine_busy_seconds,
    session_pids,
    system_cpu_seconds,
    tracebox,
)
from ingest_bench import LoadGenerator
from report import percentiles

COMMANDS = {
    "uvicorn": [
        "-m", "uvicorn", "tracebox.app:create_app_from_env", "--factory",
        "--loop", "uvloop", "--http", "httptools", "--no-access-log", "--log-level", "warning",
    ],
    "granian": [
        "-m", "granian", "--interface", "asgi", "--factory", "--loop", "uvloop",
        "--http", "1", "--no-ws", "--workers", "1", "--log-level", "warning",
        "tracebox.app:create_app_from_env",
    ],
    # uvicorn as "uvicorn" runs it, serving bench/null_app.py: the HTTP floor
    "floor": [
        "-m", "uvicorn", "null_app:app", "--app-dir", str(Path(__file__).parent),
        "--loop", "uvloop", "--http", "httptools", "--no-access-log", "--log-level", "warning",
    ],
}  # fmt: skip


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--servers", nargs="+", default=["uvicorn", "granian"], choices=COMMANDS)
    p.add_argument("--rounds", type=int, default=1, help="runs per server, alternating")
    p.add_argument("--events", type=int, default=15_000, help="closed-loop events")
    p.add_argument("--rate", type=float, default=1_000, help="open-loop events/s")
    p.add_argument("--rate-seconds", type=float, default=10)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--json", type=Path)
    return p.parse_args()


def start(server: str, data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ, TRACEBOX_DATA_DIR=str(data_dir), TRACEBOX_LOG_LEVEL="warning")
    cmd = [sys.executable, *COMMANDS[server], "--host", "127.0.0.1", "--port", str(port)]
    log = (data_dir / f"{server}.log").open("wb")
    proc = subprocess.Popen(
        cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/-/health", timeout=2):
                return proc
        except urllib.error.HTTPError:
            return proc  # answering: 503 only says the digest is not running (none here)
        except OSError:
            time.sleep(0.2)
    stop(proc)  # it may be up but unreachable: a server left behind would load later runs
    raise RuntimeError(f"{server} did not start: {(data_dir / f'{server}.log').read_text()}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def phase(
    proc: subprocess.Popen[bytes], loadgen: LoadGenerator, command: tuple[Any, ...]
) -> dict[str, Any]:
    pids = session_pids(proc.pid)
    before, busy = cpu_seconds(pids), machine_busy_seconds()[0]
    system_before = system_cpu_seconds(pids)
    result = loadgen.run(*command)
    pids = session_pids(proc.pid)
    used = sum(v - before.get(pid, 0.0) for pid, v in cpu_seconds(pids).items())
    system = sum(v - system_before.get(pid, 0.0) for pid, v in system_cpu_seconds(pids).items())
    wall = max(result.last_answer - result.first_send, 1e-9)
    other = machine_busy_seconds()[0] - busy - used - result.cpu_seconds
    return {
        "acknowledged": result.acknowledged,
        "acknowledged_per_s": result.acknowledged / wall,
        "server_cpu_ms_per_event": 1000 * used / max(result.acknowledged, 1),
        "server_system_cpu_ms_per_event": 1000 * system / max(result.acknowledged, 1),
        "latency_ms": percentiles(result.latency),
        "latency_from_schedule_ms": percentiles(result.latency_from_schedule),
        "other_processes_cpu_fraction": other / (wall * (os.cpu_count() or 1)),
    }


def run_server(
    server: str, args: argparse.Namespace, loadgen: LoadGenerator, port: int, data_dir: Path
) -> dict[str, Any]:
    shutil.rmtree(data_dir / "spool", ignore_errors=True)
    proc = start(server, data_dir, port)
    try:
        phase(proc, loadgen, ("closed", 1000, args.concurrency, 120))
        closed = phase(proc, loadgen, ("closed", args.events, args.concurrency, 300))
        # --rate 0: no open loop (its figures would divide by no events)
        opened = (
            phase(proc, loadgen, ("open", args.rate, args.rate_seconds, 256))
            if args.rate > 0
            else None
        )
    finally:
        stop(proc)
    return {"server": server, "closed": closed, "open": opened}


def main() -> int:
    args = parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="tracebox-http-bench-"))
    rounds = args.rounds * len(args.servers)
    total = rounds * (1000 + args.events + int(args.rate * args.rate_seconds))
    loadgen = LoadGenerator(total, seed=7)
    results = []
    try:
        g = ["--data-dir", str(data_dir)]
        tracebox(g, "migrate")
        project = orjson.loads(tracebox(g, "project", "create", "bench/http"))
        key = orjson.loads(tracebox(g, "key", "create", str(project["id"])))
        loadgen.corpus_stats()
        port = free_port()  # every server in turn on this port: the load generator's target
        loadgen.target(port, project["id"], key["public_key"])
        for n in range(rounds):
            server = args.servers[n % len(args.servers)]
            results.append(run_server(server, args, loadgen, port, data_dir))
            print(render(results[-1]), flush=True)
    finally:
        loadgen.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    if args.json:
        args.json.write_text(orjson.dumps(results, option=orjson.OPT_INDENT_2).decode())
    return 0


def render(r: dict[str, Any]) -> str:
    c, o = r["closed"], r["open"]
    closed = (
        f"{r['server']:8s} closed: {c['acknowledged_per_s']:6,.0f} events/s, web CPU"
        f" {c['server_cpu_ms_per_event']:.3f} ms/event"
        f" (kernel {c['server_system_cpu_ms_per_event']:.3f}),"
        f" p99 {c['latency_ms'].get('p99', 0):.1f} ms;"
    )
    if o is None:
        return f"{closed} other processes {c['other_processes_cpu_fraction']:.0%}"
    return (
        f"{closed} open: web CPU {o['server_cpu_ms_per_event']:.3f} ms/event"
        f" (kernel {o['server_system_cpu_ms_per_event']:.3f}),"
        f" p99 from schedule {o['latency_from_schedule_ms'].get('p99', 0):.1f} ms;"
        f" other processes {c['other_processes_cpu_fraction']:.0%}"
        f" / {o['other_processes_cpu_fraction']:.0%}"
    )


if __name__ == "__main__":
    sys.exit(main())
