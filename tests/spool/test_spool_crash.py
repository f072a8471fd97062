"""A writer killed with SIGKILL loses no acknowledged record (contract 1)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

import tracebox
from tracebox.spool import SpoolReader

Drain = Callable[..., tuple[list[bytes], dict[str, int]]]

# 32 tasks append one 3 KB record at a time and print "acked <id>" as soon as each
# append returns, so the process is always in the middle of some append when killed.
WRITER = r"""
import asyncio, sys
from pathlib import Path
from tracebox.spool import SpoolWriter

async def produce(writer, task):
    n = 0
    while True:
        record_id = f"{task}-{n}"
        await writer.append([record_id.encode().ljust(3000, b".")])
        sys.stdout.write(f"acked {record_id}\n")
        sys.stdout.flush()
        n += 1

async def main():
    writer = SpoolWriter(Path(sys.argv[1]), segment_bytes=256 * 1024,
                         max_undigested_bytes=1 << 40, commit_interval_s=0.0, retry_after=1)
    await writer.start()
    await asyncio.gather(*(produce(writer, task) for task in range(32)))

asyncio.run(main())
"""


def run_writer_until_killed(spool_dir: Path, acks_before_kill: int) -> set[str]:
    """Start the writer, SIGKILL it after some acknowledgements; return every acked id."""
    src = str(Path(tracebox.__file__).parent.parent)
    env = {**os.environ, "PYTHONPATH": src}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(spool_dir)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    lines = []
    watchdog = threading.Timer(30, proc.kill)  # a hung writer fails the test, not the run
    watchdog.start()
    try:
        while len(lines) < acks_before_kill and (line := proc.stdout.readline()):
            lines.append(line)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        watchdog.cancel()
    lines += proc.stdout.readlines()  # acknowledged before the kill, not yet read by us
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    assert len(lines) >= acks_before_kill, "the writer died on its own"
    # A line cut by the kill acknowledged nothing.
    return {line.split()[1] for line in lines if line.endswith("\n")}


@pytest.mark.slow
def test_sigkilled_writer_loses_no_acknowledged_record(spool_dir: Path, drain: Drain) -> None:
    acked = run_writer_until_killed(spool_dir, acks_before_kill=400)

    reader = SpoolReader(spool_dir)
    records, positions = drain(reader, batch=50)
    found = [record.rstrip(b".").decode() for record in records]
    assert acked <= set(found)
    assert len(found) == len(set(found))
    for task in range(32):  # each producer's records come back in order
        numbers = [int(f.split("-")[1]) for f in found if f.startswith(f"{task}-")]
        assert numbers == list(range(len(numbers)))

    # The dead writer's last segment counts as finished: everything is released.
    names = sorted(p.name for p in spool_dir.glob("*.seg"))
    assert len(names) > 1
    assert reader.release(positions) == names
    # Only a .tmp file may be left, if the kill came while a segment was being created:
    # it never holds records and the reader ignores it.
    assert [p.suffix for p in spool_dir.iterdir()] in ([], [".tmp"])
