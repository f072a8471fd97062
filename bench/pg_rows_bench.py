"""What the digest's PostgreSQL events insert costs per row, on both sides of the socket.

Batches of events (random bytes of ``--payload-bytes``: a stored payload is zstd, so it
does not compress) are inserted with the digest's own statement (``store.digest``'s
events insert, ``RowsInsert`` of ``store.bulk``) into a migrated database holding one
project and its errors. It prints the CPU per row of this process (building the
statement's parameters, SQLAlchemy, psycopg) and of the PostgreSQL backend that ran the
statements (read from ``/proc``: the cluster must run on this machine), each batch
committed as the digest does. Not a test: run it by hand on a throwaway database
(bench/README.md).

    .venv/bin/python bench/pg_rows_bench.py --database-url postgresql://postgres@127.0.0.1:55433/rows
"""

from __future__ import annotations

import argparse
import os
import platform
import time

from harness import cpu_seconds
from tag_rows_bench import add_errors

from tracebox.store import Database, projects
from tracebox.store import digest as store_digest

ERRORS = 1_000


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--database-url", required=True, help="PostgreSQL, on this machine")
    p.add_argument("--batch-size", type=int, default=500)
    p.add_argument("--batches", type=int, default=40, help="the first quarter warms up")
    p.add_argument("--payload-bytes", type=int, default=3_600, help="the corpus's mean: 3.6 KB")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    db = Database(args.database_url)
    db.migrate()
    with db.write() as conn:
        project = projects.create(conn, f"bench/rows-{time.time_ns()}", "rows")
        first = add_errors(conn, project.id, ERRORS)
    now = time.time()
    warm = args.batches // 4
    client = backend = 0.0
    n = 0
    for batch in range(args.batches):
        rows = []
        for _ in range(args.batch_size):
            n += 1
            error_id, user = first + n % ERRORS, f"id:{n % 5000}"
            payload = os.urandom(args.payload_bytes)
            rows.append(
                (project.id, error_id, f"{n:032x}", now, now, "error", "prod", "1.0", user, payload)
            )
        with db.write() as conn:
            pid = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
            c0, b0 = time.process_time(), cpu_seconds([pid])[pid]
            store_digest._INSERT_EVENTS.insert_new(conn, rows, known_new=True)
        c1, b1 = time.process_time(), cpu_seconds([pid])[pid]
        if batch >= warm:
            client += c1 - c0
            backend += b1 - b0
    db.dispose()
    rows_counted = (args.batches - warm) * args.batch_size
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print(
        f"events insert, {args.batch_size} rows a batch, {args.payload_bytes:,} B payloads:"
        f" this process {client / rows_counted * 1e6:.1f} us per row,"
        f" PostgreSQL {backend / rows_counted * 1e6:.1f} us per row (commit included)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
