"""Spool write throughput: N concurrent asyncio producers appending fixed-size records.

Prints records/s, fsyncs/s and the p50/p99 latency of one append (queued -> fsynced).
Not a test: run it by hand, e.g.

    .venv/bin/python bench/spool_bench.py --producers 64 --records 100000
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from tracebox.spool import SpoolReader, SpoolWriter

MIB = 1024 * 1024


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--producers", type=int, default=64, help="concurrent asyncio tasks")
    parser.add_argument("--records", type=int, default=100_000, help="records in total")
    parser.add_argument("--record-bytes", type=int, default=3 * 1024)
    parser.add_argument("--records-per-append", type=int, default=1)
    parser.add_argument("--commit-interval-ms", type=float, default=2.0)
    parser.add_argument("--segment-mib", type=int, default=16)
    parser.add_argument("--dir", type=Path, default=None, help="parent of the temporary spool")
    parser.add_argument("--uvloop", action="store_true", help="run on uvloop")
    parser.add_argument(
        "--fsync-delay-ms", type=float, default=0.0, help="added to each fsync: a slower disk"
    )
    return parser.parse_args()


class FsyncCounter:
    """Counts os.fsync calls (file and directory fsyncs), optionally slowing them down."""

    def __init__(self, delay_s: float) -> None:
        self.count = 0
        self._fsync = os.fsync
        self._delay_s = delay_s

    def __call__(self, fd: int) -> None:
        self.count += 1
        self._fsync(fd)
        if self._delay_s:
            time.sleep(self._delay_s)

    def install(self) -> None:
        os.fsync = self

    def uninstall(self) -> None:
        os.fsync = self._fsync


async def produce(writer: SpoolWriter, appends: int, args: argparse.Namespace) -> list[float]:
    record = os.urandom(args.record_bytes)
    call = [record] * args.records_per_append
    latencies = []
    for _ in range(appends):
        started = time.perf_counter()
        await writer.append(call)
        latencies.append(time.perf_counter() - started)
    return latencies


async def run(directory: Path, args: argparse.Namespace, fsyncs: FsyncCounter) -> None:
    writer = SpoolWriter(
        directory,
        segment_bytes=args.segment_mib * MIB,
        max_undigested_bytes=1 << 50,
        commit_interval_s=args.commit_interval_ms / 1000,
        retry_after=1,
    )
    await writer.start()
    appends = args.records // (args.producers * args.records_per_append)
    fsyncs.install()
    started = time.perf_counter()
    results = await asyncio.gather(*(produce(writer, appends, args) for _ in range(args.producers)))
    elapsed = time.perf_counter() - started
    fsyncs.uninstall()
    await writer.close()
    report(directory, args, [lat for lats in results for lat in lats], elapsed, fsyncs.count)


def report(
    directory: Path, args: argparse.Namespace, latencies: list[float], elapsed: float, fsyncs: int
) -> None:
    records = len(latencies) * args.records_per_append
    read = SpoolReader(directory).read({}, records + 1).records
    assert len(read) == records, (len(read), records)
    cuts = statistics.quantiles(latencies, n=100)
    loop = "uvloop" if args.uvloop else "asyncio"
    mib_per_s = records * args.record_bytes / elapsed / MIB
    print(
        f"producers={args.producers} records={records} record_bytes={args.record_bytes} "
        f"records_per_append={args.records_per_append} "
        f"commit_interval_ms={args.commit_interval_ms} fsync_delay_ms={args.fsync_delay_ms} "
        f"loop={loop}"
    )
    print(f"  {records / elapsed:,.0f} records/s  {mib_per_s:.1f} MiB/s")
    print(f"  {fsyncs / elapsed:,.0f} fsyncs/s  ({records / fsyncs:.1f} records per fsync)")
    print(f"  append latency p50 {cuts[49] * 1000:.2f} ms  p99 {cuts[98] * 1000:.2f} ms")


def main() -> None:
    args = parse_args()
    if args.uvloop:
        import uvloop

        uvloop.install()
    directory = Path(tempfile.mkdtemp(prefix="spool-bench-", dir=args.dir))
    try:
        asyncio.run(run(directory, args, FsyncCounter(args.fsync_delay_ms / 1000)))
    finally:
        shutil.rmtree(directory)


if __name__ == "__main__":
    main()
