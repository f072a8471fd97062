"""The digest's cost of alert rules, measured on the digest's own batch work.

Two projects on one database: one without alert rules, one with ``--rules`` active rules
(bench/alert_rules.py's mix). Batches of the ingest benchmark's events (same templates,
users and seed) go through the digest's preparation and batch write (as
``DigestWorker._commit``: normalization, grouping, payload encoding, the write,
``alerts.evaluate``), alternating between the two projects, and the median CPU seconds
per batch of each side give events per CPU second. CPU time, not wall time: on a shared
machine wall time mostly measures the neighbours (with SQLite the database's work is in
this process too; with PostgreSQL its server's CPU is not counted). The first batches
create the corpus's ~1,000 errors and are not measured: new errors fire the new-error
rules, which is the start of a run, not its steady state. A focused companion to
``ingest_bench.py --alert-rules N``.

    .venv/bin/python bench/alert_overhead.py --rules 10 --batches 60
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import alert_rules
import corpus
import orjson

from tracebox.digest.prepare import project_ids, read_records
from tracebox.digest.worker import DigestWorker
from tracebox.spool import RecordKind, SpoolReader, SpoolRecord
from tracebox.store import Database, projects

WARM_BATCHES = 8  # 4,000 events: the corpus's ~1,000 errors exist, the steady state


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", type=int, default=10)
    p.add_argument("--batches", type=int, default=40, help="measured batches per side")
    p.add_argument("--batch-size", type=int, default=500, help="as TRACEBOX_DIGEST_BATCH_SIZE")
    p.add_argument("--database-url", default="", help="default: SQLite in a temp dir")
    return p.parse_args()


def spool_batches(project_id: int, count: int, size: int) -> list[list[bytes]]:
    """Spool records as ingestion writes them: the SDK's JSON in a ``SpoolRecord``
    (the digest normalizes it)."""
    templates = corpus._templates(7, 5000, 20000)
    rng, now = random.Random(7), time.time()
    records = []
    for _ in range(count * size):
        event = dict(rng.choice(templates))
        event["event_id"] = uuid.uuid4().hex
        event["user"] = corpus._user(rng.randrange(corpus.USERS))
        record = SpoolRecord(
            kind=RecordKind.EVENT,
            project_id=project_id,
            key_id=1,
            received=now,
            payload=orjson.dumps(event),
            client_ip="192.0.2.1",
            event_id=event["event_id"],
        )
        records.append(record.encode())
    return [records[i : i + size] for i in range(0, len(records), size)]


def digest(worker: DigestWorker, records: list[bytes]) -> float:
    """CPU seconds of this process (SQLite runs in it) for one batch: on a shared
    machine, wall time mostly measures the neighbours."""
    start = time.process_time()
    spooled = read_records(records)
    with worker.db.read() as conn:
        configs = worker.configs.load(conn, project_ids(records))
    prepared = worker.preparer.prepare(spooled, configs)
    with worker.db.write() as conn:
        worker._write(conn, prepared)
    return time.process_time() - start


def main() -> int:
    args = parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite:///{Path(tmp) / 'bench.sqlite3'}"
        db = Database(url)
        db.migrate()
        with db.write() as conn:
            plain = projects.create(conn, f"bench/plain-{time.time_ns()}", "plain")
            ruled = projects.create(conn, f"bench/rules-{time.time_ns()}", "rules")
        alert_rules.create(url, ruled.id, args.rules)
        worker = DigestWorker(db, SpoolReader(Path(tmp) / "spool"), batch_size=args.batch_size)
        total = WARM_BATCHES + args.batches
        names = ("without rules", f"with {args.rules} rules")
        sides = {
            names[0]: spool_batches(plain.id, total, args.batch_size),
            names[1]: spool_batches(ruled.id, total, args.batch_size),
        }
        times: dict[str, list[float]] = {name: [] for name in sides}
        for n in range(total):
            order = list(sides.items())
            for name, batches in order if n % 2 else order[::-1]:  # ABBA: neither always first
                elapsed = digest(worker, batches[n])
                if n >= WARM_BATCHES:
                    times[name].append(elapsed)
        db.dispose()
    rates = {k: args.batch_size / statistics.median(v) for k, v in times.items()}
    for name, rate in rates.items():
        print(
            f"{name:>18}: {rate:8,.0f} events/s digested per CPU second "
            f"(median of {args.batches} batches)"
        )
    change = 100 * (rates[names[1]] - rates[names[0]]) / rates[names[0]]
    print(f"{'difference':>18}: {change:+.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
