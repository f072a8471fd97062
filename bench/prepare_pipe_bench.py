"""CPU of the pipe between the digest and its prepare process (digest.prepare_process).

A child is started as the digest starts its prepare process, but it does not prepare:
it decodes each batch of spool records it is sent (``read_records``: every record, as
``serve``'s child does while it prepares them) and answers with the same batch
prepared once beforehand, so only the crossing is
measured: the parent's CPU to send the records and take the answer, the child's to take
the records and send the answer, per event. Not a test: run it by hand (bench/README.md),
alternating two trees to compare them, e.g.

    PYTHONPATH=src .venv/bin/python bench/prepare_pipe_bench.py --batches 100
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from typing import Any

from digest_bench import spool_records

from tracebox.digest import prepare_process as pipe
from tracebox.digest.prepare import PreparedBatch, Preparer, ProjectConfig, read_records


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, default=400, help="records per batch (500 * 4/5)")
    p.add_argument("--batches", type=int, default=100)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args()


# Answers as the tree under test sends them (a tree from before _compact sends the batch).
_compact = getattr(pipe, "_compact", lambda batch: batch)
_expanded = getattr(pipe, "_expanded", None)


def child() -> int:
    """Take the prepared answer, then answer every batch of records with it."""
    requests, answers = sys.stdin.buffer, os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    first = pipe._receive(requests)
    assert first is not None
    answer = _compact(first[0])
    pipe._send(answers, None)
    started = resource.getrusage(resource.RUSAGE_SELF)
    while (request := pipe._receive(requests)) is not None:
        read_records(request[1])
        pipe._send(answers, answer)
    ended = resource.getrusage(resource.RUSAGE_SELF)
    cpu = ended.ru_utime + ended.ru_stime - started.ru_utime - started.ru_stime
    sys.stderr.write(f"{cpu}\n")
    return 0


def main() -> int:
    args = parse_args()
    if args.child:
        return child()
    records = spool_records(args.records, args.seed, project_id=1, key_id=1)
    batch = Preparer().prepare(read_records(records), {1: ProjectConfig(1, 1)})
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    pipe._send(proc.stdin, batch)
    pipe._receive(proc.stdout)
    started = time.process_time()
    for _ in range(args.batches):
        pipe._send(proc.stdin, ({}, [1]), records)
        taken = _taken(pipe._receive(proc.stdout))
        assert len(taken.events) == len(batch.events)
    parent = time.process_time() - started
    proc.stdin.close()
    child_cpu = float(proc.stderr.read())
    proc.wait()
    events = args.batches * len(records)
    print(
        f"{args.batches} batches of {len(records)} records ({sum(map(len, records)) // 1024} KiB):"
        f" parent {parent / events * 1e6:.2f} us per event, child {child_cpu / events * 1e6:.2f}"
    )
    return 0


def _taken(message: tuple[Any, Any] | None) -> PreparedBatch:
    assert message is not None
    answer = message[0]
    batch: PreparedBatch = _expanded(*answer) if _expanded is not None else answer
    return batch


if __name__ == "__main__":
    raise SystemExit(main())
