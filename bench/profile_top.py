"""Summarize a py-spy ``--format raw`` profile (``ingest_bench.py --profile``): the top
functions per process, by inclusive and by own (leaf) samples.

    .venv/bin/python bench/profile_top.py /tmp/profile.txt [--top 25] [--idle]

``--idle`` keeps samples of threads waiting in the event loop's selector, in
``threading.Event.wait`` and the like (left out by default: they cost no CPU).
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from pathlib import Path

# Leaf frames of threads that wait (py-spy may still sample them as active).
IDLE_LEAVES = (".wait (threading.py", ".select (selectors.py", "select (selectors.py")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("profile", type=Path)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--idle", action="store_true", help="keep samples of idle threads")
    return p.parse_args()


def load(path: Path, idle: bool) -> dict[str, list[tuple[list[str], int]]]:
    """Stacks (outermost frame first) and sample counts per process."""
    out: dict[str, list[tuple[list[str], int]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        processes = [f for f in frames if f.startswith("process ")]
        frames = [f for f in frames if not f.startswith(("process ", "thread "))]
        if not frames or (not idle and any(mark in frames[-1] for mark in IDLE_LEAVES)):
            continue
        out[_process_name(processes[-1] if processes else "?")].append((frames, int(count)))
    return out


def _process_name(entry: str) -> str:
    pid, _, cmd = entry.removeprefix("process ").partition(":")
    return f"{pid} {'spawned child (digest or web worker)' if 'spawn_main' in cmd else cmd[:70]}"


def _function(frame: str) -> str:
    """``name (file.py:line)`` without the line: one entry per function."""
    name, _, where = frame.partition(" (")
    return f"{name} ({where.rpartition(':')[0]})" if where else name


def report(stacks: list[tuple[list[str], int]], top: int) -> list[str]:
    total = sum(n for _, n in stacks)
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    for frames, n in stacks:
        for function in {_function(f) for f in frames}:
            inclusive[function] += n
        own[_function(frames[-1])] += n
    lines = [f"  {total} samples"]
    lines += ["  inclusive:"] + [
        f"    {n / total:6.1%}  {fn}" for fn, n in inclusive.most_common(top)
    ]
    lines += ["  own:"] + [f"    {n / total:6.1%}  {fn}" for fn, n in own.most_common(top)]
    return lines


def main() -> None:
    args = parse_args()
    for process, stacks in sorted(load(args.profile, args.idle).items()):
        print(f"process {process}")
        print("\n".join(report(stacks, args.top)))


if __name__ == "__main__":
    main()
