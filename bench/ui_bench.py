"""Server time of the error list and details pages with many events (issue 4's target:
p95 <= 100 ms each with 1,000,000 events in 10,000 errors on SQLite).

Builds the data once (``bench/ui_data.py``: the digest's batch write, no ingestion),
then signs in and requests each page shape through the whole ASGI app in-process. The
time measured is the server's: from the request entering the app to the last byte of
the response leaving it (an ASGI wrapper), so no HTTP client or network is counted.

    .venv/bin/python bench/ui_bench.py                      # 1,000,000 events, 10,000 errors
    .venv/bin/python bench/ui_bench.py --events 100000 --errors 2000 --requests 50
    .venv/bin/python bench/ui_bench.py --data-dir /tmp/uibench --keep   # reuse the data next time
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
from sqlalchemy import func, select, update

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ui_data.py

from ui_data import generate

from tracebox.accounts import users
from tracebox.app import create_app
from tracebox.config import Settings
from tracebox.models import AccessLevel
from tracebox.store import Database, members, projects
from tracebox.store.tables import errors, events
from tracebox.tracking import settings as tracking_settings

TARGET_P95_MS = 100.0
PASSWORD = "benchmark password"
PATH = "bench/web"
ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


@dataclass
class Timed:
    """Wraps the app; records the server time of each request in milliseconds, and the
    CPU time the process used meanwhile (requests run one at a time: all of it is the
    request's), which other jobs on a shared machine do not inflate."""

    app: ASGIApp
    last_ms: float = 0.0
    last_cpu_ms: float = 0.0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, cpu = time.perf_counter(), time.process_time()

        async def timed_send(message: dict[str, Any]) -> None:
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                self.last_ms = (time.perf_counter() - started) * 1000
                self.last_cpu_ms = (time.process_time() - cpu) * 1000

        await self.app(scope, receive, timed_send)


def main() -> int:
    args = _arguments()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="tracebox-uibench-"))
    settings = Settings(data_dir=data_dir, database_url="", external_url="http://localhost:8000")
    db = Database(settings.resolved_database_url())
    db.migrate()
    try:
        _ensure_data(db, args)
        return asyncio.run(_measure(settings, db, args))
    finally:
        db.dispose()
        if not args.keep and args.data_dir is None:
            shutil.rmtree(data_dir, ignore_errors=True)


def _arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--errors", type=int, default=10_000)
    p.add_argument("--requests", type=int, default=200, help="timed requests per page shape")
    p.add_argument("--warmup", type=int, default=10, help="untimed requests per page shape")
    p.add_argument("--data-dir", type=Path, default=None, help="default: a temporary directory")
    p.add_argument("--keep", action="store_true", help="keep the data directory")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--only", default="", help="a regular expression: time only matching shapes")
    return p.parse_args()


def _ensure_data(db: Database, args: argparse.Namespace) -> None:
    with db.read() as conn:
        project = projects.get_by_path(conn, PATH)
        stored = int(conn.execute(select(func.count()).select_from(events)).scalar_one())
    if project is not None and stored == args.events:
        print(f"reusing {stored:,} events in {args.data_dir}")
        return
    if project is not None:
        raise SystemExit(
            f"{args.data_dir} holds other data ({stored:,} events); use another --data-dir"
        )
    with db.write() as conn:
        project = projects.create(conn, PATH, "Web")
        tracking_settings.save(conn, project.id, active=True, integrated=True, create=True)
        user = users.create_user(
            conn,
            username="bench",
            email="bench@example.com",
            name="Bench",
            password=PASSWORD,
            is_admin=False,
        )
        members.add(conn, project.id, user.id, AccessLevel.OWNER)
    started = time.perf_counter()
    for written in generate(
        db, project.id, errors_count=args.errors, events_count=args.events, seed=args.seed
    ):
        if written % 100_000 == 0 or written == args.events:
            rate = written / (time.perf_counter() - started)
            print(f"  wrote {written:,} events ({rate:,.0f}/s)", flush=True)
    with db.write() as conn:
        # "assigned:me": every 50th error is the bench user's
        conn.execute(update(errors).where(errors.c.id % 50 == 0).values(assignee_id=user.id))
        conn.exec_driver_sql("ANALYZE")
    print(f"generated in {time.perf_counter() - started:.0f} s")


async def _measure(settings: Settings, db: Database, args: argparse.Namespace) -> int:
    app = create_app(settings)
    timed = Timed(app)  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=timed)  # type: ignore[arg-type]
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://bench") as client,
    ):
        await _sign_in(client)
        shapes = await _shapes(client, db)
        results = {}
        for name, urls in shapes.items():
            if not re.search(args.only, name):
                continue
            results[name] = await _time(client, timed, urls, args)
    _report(results, db, args)
    worst = [v["p95"] for v in results.values()]
    return 0 if all(p95 <= TARGET_P95_MS for p95 in worst) else 1


async def _sign_in(client: httpx.AsyncClient) -> None:
    page = await client.get("/users/sign_in")
    token = re.search(r'name="_csrf" value="([^"]+)"', page.text)
    assert token
    r = await client.post(
        "/users/sign_in", data={"_csrf": token.group(1), "username": "bench", "password": PASSWORD}
    )
    assert r.status_code == 303, r.text


async def _shapes(client: httpx.AsyncClient, db: Database) -> dict[str, list[str]]:
    """The URLs of each page shape: list pages (first, deep keyset pages, filters, sorts,
    search) and details pages (the busiest error, a median one, older-event steps)."""
    base = f"/{PATH}/-/error_tracking"
    deep, url = [], base
    for _ in range(10):  # follow "Next" ten pages deep
        page = await client.get(url)
        found = re.search(r'rel="next" href="([^"]+)"', page.text)
        if not found:
            break
        url = unescape(found.group(1))
        deep.append(url)
    with db.read() as conn:
        busiest = conn.execute(
            select(errors.c.id).order_by(errors.c.events_count.desc()).limit(1)
        ).scalar_one()
        ids = [
            r[0] for r in conn.execute(select(errors.c.id).order_by(errors.c.events_count.desc()))
        ]
    median = ids[len(ids) // 2]
    spread = ids[:: max(1, len(ids) // 50)]
    first = await client.get(f"{base}/{busiest}")
    older = re.search(r'rel="next" href="([^"]+)"', first.text)
    assert older
    return {
        "list: unresolved, last seen (default)": [base],
        "list: next pages (keyset, 1-10 deep)": deep,
        "list: sort by frequency": [f"{base}?sort=frequency"],
        "list: sort by first seen": [f"{base}?sort=first_seen"],
        "list: all statuses": [f"{base}?status=all"],
        "list: resolved": [f"{base}?status=resolved"],
        "list: search (no index: scans the project)": [f"{base}?search=failed+for+record+4"],
        **_query_shapes(base),
        "details: busiest error (~10% of events)": [f"{base}/{busiest}"],
        "details: median error": [f"{base}/{median}"],
        "details: 50 errors across the range": [f"{base}/{i}" for i in spread],
        "details: older event step": [
            unescape(f"{base}/{busiest}" + older.group(1)[older.group(1).index("?") :])
        ],
    }


# Search queries (issue 15): each shape is a list page with that query, the same code
# path as the UI's search box. Values name what bench/ui_data.py generates.
QUERIES = {
    "query: level and status": "is:unresolved level:fatal",
    "query: times seen": "times-seen:>500",
    "query: first seen, relative": "first-seen:-7d",
    "query: free text": "failed record",
    "query: assigned to me": "assigned:me",
    "query: for review": "is:for_review",
    "query: release": "release:app@2.3.0",
    "query: release:latest": "release:latest",
    "query: environment": "environment:staging",
    "query: tag": "browser:Safari",
    "query: negated tag": "!browser:Firefox",
    "query: custom tag": "region:eu-1",
    "query: user email": "user.email:user-42@example.com",
    "query: user id": "user.id:user-4242",
    "query: combined": "is:unresolved level:error release:app@1.3.0 browser:Chrome os:Linux",
}


def _query_shapes(base: str) -> dict[str, list[str]]:
    return {f"list: {name}": [f"{base}?{urlencode({'query': q})}"] for name, q in QUERIES.items()}


async def _time(
    client: httpx.AsyncClient, timed: Timed, urls: list[str], args: argparse.Namespace
) -> dict[str, float]:
    for i in range(args.warmup):
        await client.get(urls[i % len(urls)])
    samples, cpu = [], []
    for i in range(args.requests):
        r = await client.get(urls[i % len(urls)])
        assert r.status_code == 200, (urls[i % len(urls)], r.status_code)
        samples.append(timed.last_ms)
        cpu.append(timed.last_cpu_ms)
    samples.sort()
    cpu.sort()
    return {
        "n": len(samples),
        "cpu_p50": statistics.median(cpu),
        "cpu_p95": cpu[min(len(cpu) - 1, int(len(cpu) * 0.95))],
        "p50": statistics.median(samples),
        "p95": samples[min(len(samples) - 1, int(len(samples) * 0.95))],
        "p99": samples[min(len(samples) - 1, int(len(samples) * 0.99))],
        "max": samples[-1],
    }


def _report(results: dict[str, dict[str, float]], db: Database, args: argparse.Namespace) -> None:
    with db.read() as conn:
        n_events = conn.execute(select(func.count()).select_from(events)).scalar_one()
        n_errors = conn.execute(select(func.count()).select_from(errors)).scalar_one()
    size = Path(db.url.removeprefix("sqlite:///")).stat().st_size
    print()
    python, sqlite = platform.python_version(), sqlite3.sqlite_version
    print(f"machine: {_cpu()}, {os.cpu_count()} CPUs; Python {python}, SQLite {sqlite}")
    print(f"data: {n_events:,} events in {n_errors:,} errors; database {size / 2**30:.2f} GiB")
    shape = f"{args.requests} timed requests per shape after {args.warmup} warm-up"
    print(f"server time per request, ms ({shape}):")
    head = f"{'page':50} {'p50':>8} {'p95':>8} {'p99':>8} {'max':>8} {'cpu p50':>8} {'cpu p95':>8}"
    print(head)
    for name, r in results.items():
        print(
            f"{name:50} {r['p50']:8.1f} {r['p95']:8.1f} {r['p99']:8.1f} {r['max']:8.1f}"
            f" {r['cpu_p50']:8.1f} {r['cpu_p95']:8.1f}"
        )
    for kind in ("list", "details"):
        for measure, label in (("p95", "server time"), ("cpu_p95", "CPU time")):
            timed = [r[measure] for name, r in results.items() if name.startswith(kind)]
            if not timed:
                continue
            p95 = max(timed)
            verdict = "met" if p95 <= TARGET_P95_MS else "NOT met"
            print(
                f"target p95 <= {TARGET_P95_MS:.0f} ms, {kind} pages, {label}:"
                f" worst p95 {p95:.1f} ms: {verdict}"
            )


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
