"""How long an fsync takes on this disk now: what ingestion waits for before every
acknowledgement (the spool's group commit). Appends 4 KiB and fsyncs, every millisecond,
for ``--seconds``, in a file it creates in ``--dir`` and removes; prints the quantiles.

Run it beside something that writes to the same disk to see what that costs ingestion,
e.g. a cleanup of a copy of the cleanup benchmark's database (docs/performance.md):

    TRACEBOX_CLEANUP_WRITE_MIB_PER_S=8 .venv/bin/python -m tracebox --data-dir /tmp/copy cleanup &
    .venv/bin/python bench/fsync_probe.py --dir /tmp --seconds 25
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

BLOCK = b"x" * 4096


def probe(directory: Path, seconds: float) -> list[float]:
    """Milliseconds per append+fsync."""
    fd, name = tempfile.mkstemp(dir=directory, prefix="fsync-probe-")
    latencies: list[float] = []
    try:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            started = time.perf_counter()
            os.write(fd, BLOCK)
            os.fsync(fd)
            latencies.append((time.perf_counter() - started) * 1000)
            time.sleep(0.001)
    finally:
        os.close(fd)
        os.unlink(name)
    return latencies


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    p.add_argument("--seconds", type=float, default=25.0)
    args = p.parse_args()
    ms = sorted(probe(args.dir, args.seconds))
    q = statistics.quantiles(ms, n=1000)
    print(
        f"fsyncs {len(ms):,}: p50 {q[499]:.2f} ms, p99 {q[989]:.2f} ms, "
        f"p99.9 {q[998]:.2f} ms, max {ms[-1]:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
