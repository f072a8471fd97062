"""Digest benchmark: N digest workers ("nodes"), each draining its own pre-filled spool
into one database, as N nodes on one PostgreSQL do.

The spools hold what ingest would have written for the ingest benchmark's corpus (the
event items as received, one record per event). The digests start together; the run
measures the wall time until every one has drained its spool, the CPU of each digest
and of the PostgreSQL cluster, and checks that the database holds every event once.

    .venv/bin/python bench/digest_bench.py --nodes 1
    .venv/bin/python bench/digest_bench.py --nodes 2 \\
        --database-url postgresql://postgres@127.0.0.1:55433/bench
"""

from __future__ import annotations

import argparse
import gc
import gzip
import multiprocessing
import queue
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
from corpus import build
from harness import cpu_seconds, machine_busy_seconds, postgres_pids, wait_until_idle
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tracebox.config import Settings
from tracebox.protocol.envelope import parse_envelope
from tracebox.spool import RecordKind, SpoolRecord, SpoolWriter
from tracebox.spool.record import SentGzip
from tracebox.store import Database, client_keys, projects


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--database-url", default="", help="default: SQLite in a temporary dir")
    p.add_argument("--nodes", type=int, default=1, help="digest workers, one spool each")
    p.add_argument("--events", type=int, default=30_000, help="events in all spools")
    p.add_argument("--batch-size", type=int, default=500, help="TRACEBOX_DIGEST_BATCH_SIZE")
    p.add_argument(
        "--batch-bytes",
        type=int,
        default=Settings.digest_batch_bytes,
        help="TRACEBOX_DIGEST_BATCH_BYTES (serve's default; 0: none, parts of --batch-size)",
    )
    p.add_argument("--seed", type=int, default=7)
    p.add_argument(
        "--train",
        type=int,
        default=0,
        help="first digest this many other events and train the project's zstd dictionary",
    )
    p.add_argument(
        "--prepare-process",
        action="store_true",
        help="each node prepares its batches in a child process (TRACEBOX_DIGEST_PREPARE_PROCESS,"
        " serve's default); its CPU counts as the node's",
    )
    p.add_argument(
        "--hyperscan",
        action="store_true",
        help="each node's own process scrubs with Hyperscan too (serve's does not: only"
        " its prepare process does; docs/performance.md, 2026-11-30)",
    )
    p.add_argument("--wait-idle", type=float, default=0, metavar="SECONDS")
    p.add_argument("--json", type=Path, help="also write the figures here")
    return p.parse_args()


def spool_records(events: int, seed: int, project_id: int, key_id: int) -> list[bytes]:
    """One encoded spool record per event of the corpus, as ingest writes them: each
    envelope holds its event alone, so the record holds the gzip body as sent."""
    corpus = build(events, seed=seed)
    now = time.time()
    out = []
    for body in corpus.bodies:
        envelope = parse_envelope(gzip.decompress(body), max_items=10)
        [item] = envelope.items
        assert item.offset is not None
        record = SpoolRecord(
            kind=RecordKind.EVENT,
            project_id=project_id,
            key_id=key_id,
            received=now,
            payload=item.payload,
            client_ip="127.0.0.1",
            event_id=envelope.headers["event_id"],
            sent=SentGzip(body, item.offset),
        )
        out.append(record.encode())
    return out


def fill_spool(directory: Path, records: list[bytes]) -> None:
    writer = SpoolWriter(
        directory,
        segment_bytes=16 << 20,
        max_undigested_bytes=1 << 40,
        commit_interval_s=0,
        retry_after=30,
    )
    writer.start_sync()
    for start in range(0, len(records), 64):  # 64 records per fsync: quick to fill
        writer.append_sync(records[start : start + 64])
    writer.close_sync()


def run_node(
    url: str,
    spool: str,
    batches: tuple[int, int],
    prepare: bool,
    hyperscan: bool,
    go: Any,
    results: Any,
    end: Any,
) -> None:
    """A digest worker draining one spool (a node), started when ``go`` is set; its
    connections stay open until ``end`` is set, so their backends' CPU can be read."""
    from tracebox.digest.worker import DigestWorker
    from tracebox.spool import SpoolReader
    from tracebox.supervisor.host import GC_THRESHOLD

    gc.set_threshold(GC_THRESHOLD)  # as in serve's background process
    if hyperscan:
        from tracebox import privacy

        privacy.use_hyperscan()
    db = Database(url, pool_size=2)
    batch_size, batch_bytes = batches
    worker = DigestWorker(
        db,
        SpoolReader(Path(spool)),
        batch_size=batch_size,
        batch_bytes=batch_bytes or None,
        prepare_process=prepare,
    )
    go.wait()
    started, cpu = time.monotonic(), time.process_time()
    records = worker.drain()
    seconds = time.monotonic() - started
    own_cpu = time.process_time() - cpu
    worker.close()  # the prepare process exits: its CPU is in RUSAGE_CHILDREN
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    results.put(
        {
            "records": records,
            "seconds": seconds,
            "cpu_seconds": own_cpu + children.ru_utime + children.ru_stime,
            "own_cpu_seconds": own_cpu,
            "batches": worker.stats.batches,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "parts": worker.stats.parts,
            "inserted": worker.stats.events_inserted,
        }
    )
    end.wait()
    db.dispose()


def reports(results: Any, nodes: list[Any], limit_s: float = 3600.0) -> list[dict[str, Any]]:
    """Each node's figures. A node waits for ``end`` once it has reported, so one that
    exited before every report came failed (say, a digest batch raised): the run stops
    at once, saying which, instead of waiting for a report that will not come."""
    done: list[dict[str, Any]] = []
    deadline = time.monotonic() + limit_s
    while len(done) < len(nodes):
        try:
            done.append(results.get(timeout=1.0))
        except queue.Empty:
            gone = [
                f"node {i} (exit status {n.exitcode})"
                for i, n in enumerate(nodes)
                if n.exitcode is not None
            ]
            if gone:
                for node in nodes:  # the others would wait for ``end`` forever
                    node.terminate()
                    node.join()
                raise SystemExit(
                    f"digest benchmark: {', '.join(gone)} stopped before reporting"
                ) from None
            if time.monotonic() > deadline:
                raise SystemExit(f"digest benchmark: no report within {limit_s:.0f} s") from None
    return done


def main() -> int:
    args = parse_args()
    work = Path(tempfile.mkdtemp(prefix="tracebox-digest-bench-"))
    try:
        return run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, work: Path) -> int:
    url = Settings(data_dir=work, database_url=args.database_url).resolved_database_url()
    db = Database(url)
    db.migrate()
    with db.write() as conn:
        project = projects.create(conn, f"bench/digest-{time.time_ns()}", "digest bench")
        projects.put_settings(conn, project.id, active=True, integrated=True)
        key = client_keys.create(conn, project.id)
    if args.train:
        train_dictionary(
            db, work / "train", spool_records(args.train, args.seed + 1, project.id, key.id)
        )
    db.dispose()
    records = spool_records(args.events, args.seed, project.id, key.id)
    spools = [work / f"node-{n}" for n in range(args.nodes)]
    for n, spool in enumerate(spools):
        fill_spool(spool, records[n :: args.nodes])
    ctx = multiprocessing.get_context("spawn")
    go, end, results = ctx.Event(), ctx.Event(), ctx.Queue()
    nodes = [
        ctx.Process(
            target=run_node,
            args=(
                url,
                str(s),
                (args.batch_size, args.batch_bytes),
                args.prepare_process,
                args.hyperscan,
                go,
                results,
                end,
            ),
        )
        for s in spools
    ]
    for node in nodes:
        node.start()
    time.sleep(3)  # let them import and connect
    idle = wait_until_idle(args.wait_idle) if args.wait_idle else None
    database = "" if url.startswith("sqlite") else make_url(url).database
    # A connection of our own while the CPU is counted: ``postgres_pids`` finds the cluster
    # by a backend that names the database, and the nodes may not have connected yet. Without
    # it the cluster's processes were missed before the run and counted with all the CPU of
    # their lifetime after it (3 ms per event where the run cost ~0.6).
    watch = create_engine(url).connect() if database else None
    pg_before = cpu_seconds(postgres_pids(database)) if database else {}
    busy_before = machine_busy_seconds()[0]
    started = time.monotonic()
    go.set()
    done = reports(results, nodes)
    seconds = time.monotonic() - started
    busy = machine_busy_seconds()[0] - busy_before
    pg = 0.0
    if database:
        after = cpu_seconds(postgres_pids(database))
        pg = sum(used - pg_before.get(pid, 0.0) for pid, used in after.items())
    if watch is not None:
        watch.close()
        watch.engine.dispose()
    end.set()
    for node in nodes:
        node.join()
    stored, counted = (n - args.train for n in count(url, project.id))  # the measured ones
    report = figures(args, done, seconds, pg, busy, idle, stored, counted, "sqlite" in url)
    print(render(report))
    if args.json:
        args.json.write_text(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
    return 0 if stored == counted == args.events else 1


def train_dictionary(db: Database, spool: Path, records: list[bytes]) -> None:
    """Digest ``records``, then train the project's dictionary from them, as the cleanup
    loop does once a project has enough events (lifecycle.compression)."""
    from tracebox.digest.worker import DigestWorker
    from tracebox.lifecycle import compression
    from tracebox.spool import SpoolReader

    fill_spool(spool, records)
    DigestWorker(db, SpoolReader(spool), batch_size=500).drain()
    project_id = SpoolRecord.decode(records[0]).project_id
    trained = compression.train(db, project_id, Settings().dictionary_bytes).dictionary
    assert trained is not None and trained.used, "the dictionary did not help"


def count(url: str, project_id: int) -> tuple[int, int]:
    engine = create_engine(url)
    with engine.connect() as conn:
        params = {"p": project_id}
        stored = conn.execute(
            text("SELECT count(*) FROM events WHERE project_id = :p"), params
        ).scalar_one()
        counted = conn.execute(
            text("SELECT coalesce(sum(events_count), 0) FROM errors WHERE project_id = :p"),
            params,
        ).scalar_one()
    engine.dispose()
    return int(stored), int(counted)


def figures(
    args: argparse.Namespace,
    done: list[dict[str, Any]],
    seconds: float,
    pg: float,
    busy: float,
    idle: float | None,
    stored: int,
    counted: int,
    sqlite: bool,
) -> dict[str, Any]:
    digest_cpu = sum(d["cpu_seconds"] for d in done)
    other = busy - digest_cpu - pg
    return {
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "database": "SQLite" if sqlite else "PostgreSQL",
        "nodes": args.nodes,
        "events": args.events,
        "batch_size": args.batch_size,
        "batch_bytes": args.batch_bytes,
        "prepare_process": args.prepare_process,
        "hyperscan": args.hyperscan,
        "seconds": seconds,
        "events_per_s": args.events / seconds,
        "digest_cpu_ms_per_event": 1000 * digest_cpu / args.events,
        "postgres_cpu_ms_per_event": 1000 * pg / args.events,
        "other_processes_cpu_fraction": other / (seconds * (multiprocessing.cpu_count())),
        "machine_busy_before": idle,
        "per_node": done,
        "stored": stored,
        "counted": counted,
    }


def render(r: dict[str, Any]) -> str:
    lines = [
        f"digest benchmark: {r['database']}, {r['nodes']} node(s), {r['events']:,} events,"
        f" batches of {r['batch_size']}"
        + (f" read in parts of {r['batch_bytes']:,} B" if r.get("batch_bytes") else "")
        + (", prepare process" if r.get("prepare_process") else "")
        + (", Hyperscan in the digest's own process" if r.get("hyperscan") else "")
        + f"; started {r['started']}",
        f"  digested in {r['seconds']:.2f} s = {r['events_per_s']:,.0f} events/s",
        f"  CPU ms per event: digest {r['digest_cpu_ms_per_event']:.3f}"
        + (
            f", PostgreSQL {r['postgres_cpu_ms_per_event']:.3f}"
            if r["database"] != "SQLite"
            else ""
        ),
        f"  other processes used {r['other_processes_cpu_fraction']:.0%} of the machine's CPU",
    ]
    for n, d in enumerate(r["per_node"]):
        lines.append(
            f"  node {n}: {d['records']:,} records in {d['seconds']:.2f} s,"
            f" {d['batches']} batches of {d['parts']} parts,"
            f" CPU {d['cpu_seconds']:.2f} s (its own process {d['own_cpu_seconds']:.2f}),"
            f" peak RSS {d['peak_rss_mb']:.1f} MB"
        )
    ok = r["stored"] == r["counted"] == r["events"]
    lines.append(
        f"  consistency: {r['stored']:,} stored, {r['counted']:,} counted on errors,"
        f" {r['events']:,} spooled: {'OK' if ok else 'FAIL'}"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
