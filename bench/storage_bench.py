"""Bytes stored per event: 4 KiB pages without auto-vacuum (the file format before),
16 KiB pages (today's), and today's with a trained zstd dictionary, measured on the
ingest benchmark's corpus through the digest's own path.

For each configuration: a new SQLite file; ``--train`` events stored as the digest
stores them; for "dictionary", ``lifecycle.compression.train`` trains the project's
dictionary from them as the cleanup loop does; then ``--events`` more events are
prepared (grouping, summary, payload) and written in digest-sized batches, and the
file's growth over those events (after a WAL checkpoint, pages per table and index via
``dbstat``) is divided by their number. Also prints the CPU time per event of preparing
and writing them. Not a test: run it by hand (see bench/README.md), e.g.

    .venv/bin/python bench/storage_bench.py --events 20000
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import corpus
import orjson

from tracebox.digest.prepare import Preparer
from tracebox.lifecycle import compression
from tracebox.protocol.event import normalize_event
from tracebox.store import Database, dictionaries, projects
from tracebox.store import digest as store_digest
from tracebox.store.payloads import Dictionary

BATCH = 500  # as the digest's default batch size


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=20_000, help="events measured")
    p.add_argument("--train", type=int, default=2_000, help="events stored before measuring")
    p.add_argument("--dictionary-bytes", type=int, default=110 * 1024)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--page-size", type=int, default=0, help="try another page size (new files)")
    p.add_argument("--json", type=Path)
    return p.parse_args()


@dataclass
class Result:
    name: str
    events: int
    mean_event_bytes: float  # the events' JSON as the SDK sent it
    bytes_per_event: float
    per_10kb: float  # KB stored per 10 KB of event
    payload_bytes: float
    tables: dict[str, float]  # bytes per event per table or index
    cpu_ms_per_event: float  # prepare + write, this process


def events(count: int, seed: int) -> tuple[list[dict[str, Any]], float]:
    """``count`` normalized events from the ingest benchmark's templates, and their mean
    size as sent."""
    templates = corpus._templates(seed, 5000, 20000)
    rng = random.Random(seed)
    now = time.time()
    found, sizes = [], []
    for _ in range(count):
        raw = dict(rng.choice(templates))
        raw["event_id"] = uuid.UUID(int=rng.getrandbits(128)).hex
        raw["timestamp"] = datetime.fromtimestamp(now - rng.random() * 3600, UTC).isoformat()
        raw["user"] = corpus._user(rng.randrange(corpus.USERS))
        data = orjson.dumps(raw)
        sizes.append(len(data))
        found.append(normalize_event(orjson.loads(data), received_at=now, client_ip="10.0.0.1"))
    return found, statistics.fmean(sizes)


def measure(
    name: str, args: argparse.Namespace, data: list[dict[str, Any]], mean: float, *, old: bool
) -> Result:
    with tempfile.TemporaryDirectory(prefix="tracebox-storage-") as tmp:
        path = Path(tmp) / "tracebox.sqlite3"
        if old or args.page_size:  # the format before: 4 KiB pages, no auto-vacuum
            conn = sqlite3.connect(path)
            conn.execute(f"PRAGMA page_size={4096 if old else args.page_size}")
            conn.execute(f"PRAGMA auto_vacuum={'NONE' if old else 'INCREMENTAL'}")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.close()
        db = Database(f"sqlite:///{path}")
        if old:
            from alembic import command

            from tracebox.store.engine import alembic_config

            command.upgrade(alembic_config(db.url), "head")  # without the conversion
        else:
            db.migrate()
        with db.write() as conn:
            project_id = projects.create(conn, "bench/storage", "storage").id
        training, measured = data[: args.train], data[args.train :]
        _write(db, project_id, training, None)
        trained = None
        if name == "dictionary":  # as the cleanup loop trains it, as the digest uses it
            compression.train(db, project_id, args.dictionary_bytes)
            with db.read() as conn:
                trained = dictionaries.current(conn, [project_id])[project_id]
        before = _tables(db, path)
        started = time.process_time()
        payload = _write(db, project_id, measured, trained)
        cpu = time.process_time() - started
        after = _tables(db, path)
        db.dispose()
    n = len(measured)
    grown = {t: (after.get(t, 0) - before.get(t, 0)) / n for t in after}
    total = (after["(file)"] - before["(file)"]) / n
    return Result(
        name=name,
        events=n,
        mean_event_bytes=mean,
        bytes_per_event=total,
        per_10kb=total / mean * 10,
        payload_bytes=payload / n,
        tables={t: round(v, 1) for t, v in sorted(grown.items(), key=lambda kv: -kv[1]) if v},
        cpu_ms_per_event=cpu / n * 1000,
    )


def _write(
    db: Database, project_id: int, data: list[dict[str, Any]], dictionary: Dictionary | None
) -> int:
    preparer = Preparer()
    payload = 0
    for first in range(0, len(data), BATCH):
        chunk = data[first : first + BATCH]
        prepared = [preparer.prepare_event(project_id, e, dictionary) for e in chunk]
        payload += sum(len(p.payload) for p in prepared)
        with db.write() as conn:
            store_digest.write_events(conn, prepared)
    return payload


def _tables(db: Database, path: Path) -> dict[str, int]:
    """Bytes per table and index (dbstat), and the whole file, after a checkpoint."""
    db.dispose()
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
    finally:
        conn.close()
    return {name: int(size) for name, size in rows} | {"(file)": path.stat().st_size}


def main() -> int:
    args = parse_args()
    data, mean = events(args.train + args.events, args.seed)
    results = [
        measure("4 KiB pages", args, data, mean, old=True),
        measure("16 KiB pages", args, data, mean, old=False),
        measure("dictionary", args, data, mean, old=False),
    ]
    print(f"{args.events:,} events measured, mean {mean:,.0f} bytes as sent; per event:")
    for r in results:
        top = ", ".join(f"{t} {v:.0f}" for t, v in list(r.tables.items())[:4])
        print(
            f"  {r.name:>12}: {r.bytes_per_event:6,.0f} B = {r.per_10kb:.2f} KB per 10 KB "
            f"(payload {r.payload_bytes:,.0f} B; {top}); prepare+write "
            f"{r.cpu_ms_per_event:.2f} ms CPU"
        )
    if args.json:
        args.json.write_bytes(orjson.dumps([r.__dict__ for r in results], option=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
