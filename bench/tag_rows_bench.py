"""What the digest's SQLite writes cost per event: the events row and its tag counts.

The database is a real Tracebox one (``Database.migrate``: the schema, 16 KiB pages, WAL,
the checkpoint every 100 pages) holding 1,000 errors. Each batch inserts its events (a
4.3 KB payload each, the ingest benchmark's mean stored size) and upserts their tag counts
with the digest's own statements (``store.digest``'s events insert and ``error_tags``
upsert), 13 tags per event as the ingest benchmark's corpus has: three of them per user
(5,000 users), so mostly new rows, the others mostly counted again. It prints the CPU
per event of the inserts, the tag upserts and the commit (which runs the checkpoint), for
each batch size, and then the per-row cost of the upsert alone, with and without the search index
``ix_error_tags_search``, and of a plain ``UPDATE`` or ``INSERT`` instead. Not a test:
run it by hand (bench/README.md).

    .venv/bin/python bench/tag_rows_bench.py
    .venv/bin/python bench/tag_rows_bench.py --batch-sizes 162 480 --batches 120
"""

from __future__ import annotations

import argparse
import platform
import random
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, insert, text

from tracebox.store import Database, engine, projects
from tracebox.store import digest as store_digest
from tracebox.store.tables import errors

ERRORS = 1_000
USERS = 5_000
PAYLOAD_BYTES = 4_300
Row = tuple[Any, ...]


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[162, 480])
    p.add_argument("--batches", type=int, default=120, help="per run; the first third warms up")
    p.add_argument("--rounds", type=int, default=2, help="runs of every batch size, alternating")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--wal-autocheckpoint",
        type=int,
        metavar="PAGES",
        help="checkpoint every PAGES pages instead of Tracebox's setting (what if)",
    )
    return p.parse_args()


def main() -> int:
    args = parse_args()
    if args.wal_autocheckpoint is not None:
        engine.SQLITE_WAL_AUTOCHECKPOINT_PAGES = args.wal_autocheckpoint  # read per connection
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print("CPU per event (us) of a batch's writes, by batch size:")
    print("batch  events  tags  commit  tag rows per event")
    for _ in range(args.rounds):
        for size in args.batch_sizes:
            with _database() as handle:
                figures = _batches(handle, size, args.batches, random.Random(args.seed))
            print(
                f"{size:5d}  {figures['events']:6.1f}  {figures['tags']:4.1f}"
                f"  {figures['commit']:6.1f}  {figures['rows']:.1f}"
            )
    print("20,000 rows alone, CPU per row (us): existing rows, new rows")
    for _ in range(args.rounds):
        for label, index, plain in (
            ("upsert", True, False),
            ("upsert without the search index", False, False),
            ("plain UPDATE / INSERT", True, True),
        ):
            existing, new = _rows_alone(random.Random(args.seed), index=index, plain=plain)
            print(f"  {label}: {existing:.2f}, {new:.2f}")
    return 0


@dataclass
class _Handle:
    db: Database
    project_id: int
    first_error: int  # the errors' ids are first_error .. first_error + ERRORS - 1


@contextmanager
def _database() -> Iterator[_Handle]:
    """A migrated SQLite database in a temporary directory, with one project and its
    ``ERRORS`` errors."""
    work = Path(tempfile.mkdtemp(prefix="tracebox-tag-rows-"))
    db = Database(f"sqlite:///{work / 'tracebox.sqlite3'}")
    try:
        db.migrate()
        with db.write() as conn:
            project = projects.create(conn, "bench/tag-rows", "tag rows")
            first = add_errors(conn, project.id, ERRORS)
        yield _Handle(db, project.id, first)
    finally:
        db.dispose()
        shutil.rmtree(work, ignore_errors=True)


def add_errors(conn: Connection, project_id: int, count: int) -> int:
    """Create ``count`` errors in the project; return the first one's id (the others
    follow it)."""
    now = time.time()
    rows = [
        {
            "project_id": project_id,
            "grouping_hash": f"{n:032x}",
            "grouping_version": "bench",
            "fingerprint": "[]",
            "title": f"Error{n}",
            "first_seen": now,
            "last_seen": now,
        }
        for n in range(count)
    ]
    conn.execute(insert(errors), rows)
    query = text("SELECT min(id) FROM errors WHERE project_id = :p")
    return int(conn.execute(query, {"p": project_id}).scalar_one())


def _tags(rng: random.Random, error: int) -> list[tuple[str, str]]:
    user = rng.randrange(USERS)
    return [
        ("level", "error"),
        ("environment", "production"),
        ("release", f"web@1.{error % 3}.0"),
        ("user.id", f"user-{user}"),
        ("user.email", f"user-{user}@example.com"),
        ("user.username", f"user{user}"),
        ("browser", f"Chrome {120 + error % 5}"),
        ("os", "Linux"),
        ("url", f"https://shop.example.com/cart/{error}"),
        ("handled", "no"),
        ("mechanism", "generic"),
        ("region", rng.choice(("eu-west-1", "us-east-1"))),
        ("shard", str(rng.randint(1, 9))),
    ]


def _batches(handle: _Handle, size: int, batches: int, rng: random.Random) -> dict[str, float]:
    db, project_id, first_error = handle.db, handle.project_id, handle.first_error
    spent = {"events": 0.0, "tags": 0.0, "commit": 0.0}
    rows_written = 0
    warm = batches // 3
    payload = rng.randbytes(PAYLOAD_BYTES)
    for b in range(batches):
        now = time.time()
        event_rows: list[Row] = []
        counts: dict[tuple[int, str, str], Row] = {}
        for _ in range(size):
            error = first_error + rng.randrange(ERRORS)
            event_id = rng.randbytes(16).hex()
            event_rows.append(
                (project_id, error, event_id, now, now, "error", None, None, None, payload)
            )
            for key, value in _tags(rng, error):
                n = counts[error, key, value][4] if (error, key, value) in counts else 0
                counts[error, key, value] = (project_id, error, key, value, n + 1, now)
        tag_rows = [counts[k] for k in sorted(counts)]
        with db.write() as conn:
            t0 = time.process_time()
            store_digest._INSERT_EVENTS.execute(conn, sorted(event_rows))  # the digest's own
            t1 = time.process_time()
            store_digest._ADD_TAGS.execute(conn, tag_rows)  # the digest's own statement
            t2 = time.process_time()
        t3 = time.process_time()  # the commit, with its checkpoint
        if b >= warm:
            spent["events"] += t1 - t0
            spent["tags"] += t2 - t1
            spent["commit"] += t3 - t2
            rows_written += len(tag_rows)
    n = (batches - warm) * size
    return {k: v / n * 1e6 for k, v in spent.items()} | {"rows": rows_written / n}


def _rows_alone(rng: random.Random, *, index: bool, plain: bool) -> tuple[float, float]:
    """CPU per row (us) of writing 20,000 existing rows, then 20,000 new ones: with the
    digest's upsert, or (``plain``) an ``UPDATE`` of the existing and an ``INSERT`` of the
    new, as a writer that knew which rows exist could do."""
    with _database() as handle:
        db, project_id, first_error = handle.db, handle.project_id, handle.first_error
        with db.write() as conn:
            if not index:
                conn.execute(text("DROP INDEX ix_error_tags_search"))
            keys = [
                (first_error + e, f"key{k}", f"value{v}")
                for e in range(ERRORS)
                for k in range(10)
                for v in range(6)
            ]
            _upsert(conn, project_id, keys)
        existing = sorted(rng.sample(keys, 20_000))
        new = sorted(
            (first_error + rng.randrange(ERRORS), "user.id", f"new-{n}") for n in range(20_000)
        )
        now = time.time()
        if plain:
            return (
                _timed(db, _UPDATE_TAG, [(1, now, e, k, v) for e, k, v in existing]),
                _timed(db, _INSERT_TAG, [(project_id, e, k, v, 1, now) for e, k, v in new]),
            )
        return (
            _timed(db, None, [(project_id, e, k, v, 1, now) for e, k, v in existing]),
            _timed(db, None, [(project_id, e, k, v, 1, now) for e, k, v in new]),
        )


_UPDATE_TAG = (
    "UPDATE error_tags SET count = count + ?, last_seen = max(last_seen, ?)"
    " WHERE error_id = ? AND key = ? AND value = ?"
)
_INSERT_TAG = (
    "INSERT INTO error_tags (project_id, error_id, key, value, count, last_seen)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)


def _timed(db: Database, sql: str | None, rows: list[Row]) -> float:
    """CPU per row (us) of writing ``rows`` with ``sql`` (None: the digest's upsert)."""
    with db.write() as conn:
        started = time.process_time()
        if sql is None:
            store_digest._ADD_TAGS.execute(conn, rows)
        else:
            conn.exec_driver_sql(sql, rows)
        return (time.process_time() - started) / len(rows) * 1e6


def _upsert(conn: Connection, project_id: int, keys: list[tuple[int, str, str]]) -> None:
    now = time.time()
    store_digest._ADD_TAGS.execute(conn, [(project_id, e, k, v, 1, now) for e, k, v in keys])


if __name__ == "__main__":
    raise SystemExit(main())
