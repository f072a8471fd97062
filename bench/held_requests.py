"""The web worker's memory while requests wait for the spool's fsync (a disk stall).

Starts ``tracebox serve`` (SQLite, one web worker) with its ``os.fsync`` gated by a file:
while the file exists, every fsync waits. After a warm-up of sequential requests, it
creates the file, opens ``--requests`` connections that each send one corpus envelope,
waits until the server's RSS stops growing (every request read and waiting), then
removes the file and checks that every request was answered 200. It prints the web
worker's RSS before and while they wait, and the difference per waiting request.
Each round starts a new server (a process's heap keeps its high-water mark).

    .venv/bin/python bench/held_requests.py --requests 256 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import os
import runpy
import statistics
import sys
import tempfile
import time
from pathlib import Path

import corpus
import orjson
from harness import Server, rss_bytes, tracebox
from loadgen import HttpConnection, Requests

WARMUP = 50  # sequential requests before the held ones: the server's caches are warm
STEADY_SAMPLES = 10  # RSS unchanged for this many samples, 50 ms apart: all are waiting
HOLD_SECONDS = 60  # the most the requests are held before the run gives up


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--requests", type=int, default=256, help="requests held at once")
    p.add_argument("--rounds", type=int, default=3, help="servers started, one per round")
    p.add_argument("--seed", type=int, default=7)
    return p.parse_args()


def serve_gated(gate: str, args: list[str]) -> None:
    """Run ``tracebox *args`` in this process with ``os.fsync`` waiting while ``gate``
    exists."""
    real_fsync = os.fsync

    def gated_fsync(fd: int) -> None:
        while os.path.exists(gate):
            time.sleep(0.005)
        real_fsync(fd)

    os.fsync = gated_fsync
    sys.argv = ["tracebox", *args]
    runpy.run_module("tracebox", run_name="__main__")


def rss_mb(pid: int) -> float:
    return rss_bytes(pid) / (1 << 20)


async def one(port: int, data: bytes) -> int:
    conn = await HttpConnection.connect(port)
    try:
        status, _ = await conn.request(data)
    finally:
        conn.close()
    return status


async def held(port: int, pid: int, gate: Path, items: list[tuple[bytes, bytes]]) -> float:
    """The server's RSS once every request in ``items`` waits behind the gate."""
    gate.touch()
    tasks = [asyncio.ensure_future(one(port, data)) for data, _ in items]
    last, steady = -1.0, 0
    deadline = time.monotonic() + HOLD_SECONDS
    while steady < STEADY_SAMPLES:
        if time.monotonic() > deadline:
            gate.unlink()
            raise RuntimeError(f"the server's RSS did not settle in {HOLD_SECONDS} s")
        await asyncio.sleep(0.05)
        now = rss_mb(pid)
        steady = steady + 1 if now == last else 0
        last = now
    answered = sum(task.done() for task in tasks)
    gate.unlink()
    statuses = await asyncio.gather(*tasks)
    if answered or set(statuses) != {200}:
        raise RuntimeError(f"{answered} answered while held; statuses {set(statuses)}")
    return last


def one_round(args: argparse.Namespace, work: Path, data: corpus.Corpus) -> tuple[float, float]:
    global_args = ["--data-dir", str(work / "data")]
    tracebox(global_args, "migrate")
    project = orjson.loads(tracebox(global_args, "project", "create", "bench/held"))
    key = orjson.loads(tracebox(global_args, "key", "create", str(project["id"])))
    gate = work / "gate"
    server = Server(global_args, 1, work / "server.log", (__file__, "--serve-gated", str(gate)))
    try:
        server.wait_healthy()
        requests = Requests(data, server.port, project["id"], key["public_key"])

        async def warmup() -> None:
            for item, _ in requests.take(WARMUP):
                await one(server.port, item)

        asyncio.run(warmup())
        before = rss_mb(server.proc.pid)
        items = list(requests.take(args.requests))
        waiting = asyncio.run(held(server.port, server.proc.pid, gate, items))
        return before, waiting
    finally:
        gate.unlink(missing_ok=True)
        server.stop()


def main() -> None:
    args = parse_args()
    data = corpus.build(WARMUP + args.requests, seed=args.seed, processes=1)
    growth = []
    for round_ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="tracebox-held-") as work:
            before, waiting = one_round(args, Path(work), data)
        growth.append(waiting - before)
        each = growth[-1] * 1024 / args.requests
        print(
            f"round {round_ + 1}: web worker {before:.1f} MB before, {waiting:.1f} MB with "
            f"{args.requests} requests waiting: +{growth[-1]:.1f} MB, {each:.0f} KB each"
        )
    median = statistics.median(growth)
    print(f"median: +{median:.1f} MB, {median * 1024 / args.requests:.0f} KB per waiting request")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve-gated"]:
        serve_gated(sys.argv[2], sys.argv[3:])
    else:
        main()
