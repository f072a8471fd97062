"""What the default scrubbing costs the digest's preparing, in one process.

Runs ``Preparer.prepare`` on the ingest benchmark's corpus in batches of 160 (the prepare
process's batches, with its garbage collector threshold), with the project's scrubbing
on and off in turns, and prints the CPU microseconds per event of each round and their
medians: the difference is what the scrubbing costs. Alternate two trees with
``PYTHONPATH`` to compare them:

    PYTHONPATH=src .venv/bin/python bench/scrub_cost.py --events 1500 --rounds 12

``--numbers N`` instead times scrubbing one payload of N card numbers and N/4 strings
holding one (both as sent and once normalized): a document of many candidates, whose
cost must grow with N, not with its square.

``--groups 1,32,64`` instead prepares the corpus's records, encoded as the spool holds
them, with ``Preparer(scan_group=N)`` for each N in turns (scrubbing on): how much
scanning a group's payloads before the rest of their preparing saves (1: each record
scanned as it is prepared).

The candidates are found with Hyperscan, as the prepare process finds them;
``--automaton`` finds them as any other process does (``privacy/scan.py``).

``--automata`` instead times the automaton's pass alone (the default rules and the
sent-payload marks) with each implementation ``ahocorasick_rs`` offers, on the corpus's
payloads, and checks that they find the same matches.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import uuid

import ahocorasick_rs
import orjson
import prepare_stages

from tracebox import privacy
from tracebox.digest.prepare import Preparer, ProjectConfig, decoded
from tracebox.digest.prepare_process import GC_THRESHOLD
from tracebox.privacy import PrivacySettings, use_hyperscan
from tracebox.privacy.text import FOLD, SENT_MARKS
from tracebox.protocol.event import normalize_event
from tracebox.spool.record import RecordKind, SpoolRecord

BATCH = 160


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=1500, help="events in the corpus")
    p.add_argument("--rounds", type=int, default=12, help="rounds of each side, in turns")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--numbers", type=int, default=0, help="time a payload of N card numbers")
    p.add_argument("--automata", action="store_true", help="time the automaton's pass alone")
    p.add_argument("--groups", default="", help="compare scan groups, e.g. 1,32,64")
    p.add_argument(
        "--automaton",
        action="store_true",
        help="find candidates with the automaton, as processes other than the prepare "
        "process do (default: Hyperscan, as the prepare process does)",
    )
    return p.parse_args()


def corpus_records(events: int, seed: int) -> list[SpoolRecord]:
    """The corpus's events as ingest spools them: the gzip body as sent."""
    return [
        SpoolRecord(
            RecordKind.EVENT, 1, 1, time.time(), p, "203.0.113.7", uuid.uuid4().hex, sent=sent
        )
        for p, sent in prepare_stages.sent_events(events, seed)
    ]


def prepare_rounds(events: int, rounds: int, seed: int) -> None:
    records = corpus_records(events, seed)
    configs = {
        "on": {1: ProjectConfig(1, 1)},
        "off": {1: ProjectConfig(1, 1, privacy=PrivacySettings(scrub_data=False))},
    }
    gc.set_threshold(GC_THRESHOLD)
    preparer = Preparer()
    us: dict[str, list[float]] = {"on": [], "off": []}
    for i in range(rounds):
        for side in ("on", "off") if i % 2 == 0 else ("off", "on"):
            start = time.process_time()
            for at in range(0, len(records), BATCH):
                preparer.prepare(records[at : at + BATCH], configs[side])
            us[side].append((time.process_time() - start) / len(records) * 1e6)
    for side, figures in us.items():
        shown = " ".join(f"{x:.0f}" for x in figures)
        print(f"scrubbing {side:3}: {shown}; median {statistics.median(figures):.0f} us/event")
    cost = statistics.median(us["on"]) - statistics.median(us["off"])
    print(f"the scrubbing costs {cost:.0f} us/event")


def scan_groups(groups: list[int], events: int, rounds: int, seed: int) -> None:
    # Encoded, as the spool holds them: each decoded (inflated) as it is prepared.
    raw = [record.encode() for record in corpus_records(events, seed)]
    configs = {1: ProjectConfig(1, 1)}
    gc.set_threshold(GC_THRESHOLD)
    preparers = {n: Preparer(scan_group=n) for n in groups}
    us: dict[int, list[float]] = {n: [] for n in groups}
    for i in range(rounds):
        for n in groups if i % 2 == 0 else groups[::-1]:
            start = time.process_time()
            for at in range(0, len(raw), BATCH):
                preparers[n].prepare(decoded(raw[at : at + BATCH]), configs)
            us[n].append((time.process_time() - start) / len(raw) * 1e6)
    for n, figures in us.items():
        shown = " ".join(f"{x:.0f}" for x in figures)
        print(f"scan group {n:3}: {shown}; median {statistics.median(figures):.0f} us/event")


def many_numbers(count: int) -> None:
    card = 4111111111111111
    raw = {"message": "x", "extra": {"a": [card] * count, "s": [f'{card} \\"q'] * (count // 4)}}
    payload = orjson.dumps(raw)
    start = time.process_time()
    privacy.scrub_sent(payload)
    sent = time.process_time() - start
    start = time.process_time()
    privacy.scrub(normalize_event(raw, received_at=1.0, client_ip=None))
    normalized = time.process_time() - start
    print(
        f"{len(payload):,} B: scrubbed as sent in {sent:.2f} s, once normalized {normalized:.2f} s"
    )


def automata(events: int, rounds: int, seed: int) -> None:
    folded = [p.translate(FOLD) for p in prepare_stages.payloads(events, seed)]
    rules = privacy.scrubber_for(privacy.DEFAULT_SETTINGS).blob.text
    patterns = [*rules.patterns, *SENT_MARKS]
    print(f"{len(patterns)} patterns of {sum(map(len, patterns))} B in all")
    kinds = ahocorasick_rs.Implementation
    built = {
        name: ahocorasick_rs.BytesAhoCorasick(patterns, implementation=getattr(kinds, name))
        for name in ("DFA", "ContiguousNFA", "NoncontiguousNFA")
    }
    expected = [built["DFA"].find_matches_as_indexes(f) for f in folded]
    us: dict[str, list[float]] = {name: [] for name in built}
    for _ in range(rounds):
        for name, automaton in built.items():
            start = time.process_time()
            found = [automaton.find_matches_as_indexes(f) for f in folded]
            us[name].append((time.process_time() - start) / len(folded) * 1e6)
            assert found == expected, f"{name} finds other matches than the DFA"
    for name, figures in us.items():
        print(f"{name:16}: median {statistics.median(figures):.1f} us/event, same matches")


def main() -> None:
    args = parse_args()
    if not args.automaton:
        use_hyperscan()
    if args.groups:
        scan_groups([int(n) for n in args.groups.split(",")], args.events, args.rounds, args.seed)
    elif args.automata:
        automata(args.events, args.rounds, args.seed)
    elif args.numbers:
        many_numbers(args.numbers)
    else:
        prepare_rounds(args.events, args.rounds, args.seed)


if __name__ == "__main__":
    main()
