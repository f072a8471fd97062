"""Fault scenarios with real processes: each runs ``tracebox serve`` under load, injects one
fault, lets it recover, and counts what the database holds against what was acknowledged.

Every scenario returns a ``FaultResult``; ``notes`` lists each expectation of the
scenario that did not hold (empty when all held). The tests in this package assert on
them one scenario at a time; ``python -m tests.durability.faults`` runs them all and
prints the table recorded in docs/deployment.md.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa

from tests.durability.load import Load
from tests.durability.pgcluster import PgCluster
from tests.helpers import LiveServer, free_port, start_server, tracebox_env, wait_for
from tracebox.config import Settings
from tracebox.store import Database
from tracebox.store.tables import (
    dropped_items,
    errors,
    events,
    session_aggregates,
    spool_cursors,
)

OUTAGE_SECONDS = 20.0
SHUTDOWN_BOUND_S = 10.0  # TRACEBOX_SHUTDOWN_TIMEOUT_SECONDS's default, in docs/deployment.md


@dataclass
class FaultResult:
    fault: str
    acknowledged: int = 0
    stored: int = 0  # acknowledged envelopes whose event is in the database
    lost: int = 0  # acknowledged and not stored: must be 0
    duplicated: int = 0  # counted more than once (events, sessions, dropped items): must be 0
    recovery_seconds: float = 0.0
    recovery: str = ""  # what the recovery time measures
    notes: list[str] = field(default_factory=list)

    def expect(self, holds: bool, note: str) -> None:
        if not holds:
            self.notes.append(note)


@dataclass
class Tally:
    stored: set[str]  # event ids in the project
    events_counted: int  # sum of the errors' event counts
    sessions_exited: int  # exited sessions in the session aggregates
    profiles_dropped: int  # dropped ``profile`` items


def tally(db: Database, project_id: int) -> Tally:
    with db.read() as conn:
        ids = {
            row[0]
            for row in conn.execute(
                sa.select(events.c.event_id).where(events.c.project_id == project_id)
            )
        }
        counted = conn.execute(
            sa.select(sa.func.coalesce(sa.func.sum(errors.c.events_count), 0)).where(
                errors.c.project_id == project_id
            )
        ).scalar_one()
        exited = conn.execute(
            sa.select(sa.func.coalesce(sa.func.sum(session_aggregates.c.exited), 0)).where(
                session_aggregates.c.project_id == project_id
            )
        ).scalar_one()
        profiles = conn.execute(
            sa.select(sa.func.coalesce(sa.func.sum(dropped_items.c.count), 0)).where(
                dropped_items.c.project_id == project_id, dropped_items.c.item_type == "profile"
            )
        ).scalar_one()
    return Tally(ids, int(counted), int(exited), int(profiles))


def settle(
    result: FaultResult, db: Database, project_id: int, acked: set[str], *, timeout: float = 120
) -> Tally:
    """Wait until every acknowledged envelope is stored, then count lost and duplicated.

    Every stored event came with exactly one exited session and one dropped profile in
    the same envelope (one all-or-nothing spool append), so each count must equal the
    number of stored events: any excess was counted twice, any shortfall lost. The
    envelope's records may fall into two digest batches (a batch ends after a number of
    records), so for a moment an event can be stored before its session and profile:
    the wait is for both.
    """

    def short(t: Tally) -> list[str]:
        have = {"events counted": t.events_counted, "exited sessions": t.sessions_exited,
                "dropped profiles": t.profiles_dropped}  # fmt: skip
        return [f"{name} {n} < {len(t.stored)} events" for name, n in have.items()
                if n < len(t.stored)]  # fmt: skip

    with suppress(AssertionError):  # what did not hold is noted below
        wait_for(
            lambda: acked <= (t := tally(db, project_id)).stored and not short(t),
            timeout=timeout,
            interval=0.2,
        )
    counts = tally(db, project_id)
    rows = len(counts.stored)
    result.acknowledged = len(acked)
    result.stored = len(acked & counts.stored)
    result.lost = len(acked - counts.stored)
    result.duplicated = sum(
        max(0, n - rows) for n in (counts.events_counted, counts.sessions_exited,
                                   counts.profiles_dropped)
    )  # fmt: skip
    result.expect(result.lost == 0, f"{result.lost} acknowledged envelopes lost")
    result.expect(result.duplicated == 0, f"{result.duplicated} items counted twice")
    missing = short(counts)
    result.expect(
        not missing,
        f"stored envelopes are missing an event count, session or dropped item after "
        f"{timeout:.0f} s: {', '.join(missing)}",
    )
    return counts


def server_settings(work: Path, database_url: str, name: str = "data") -> Settings:
    return Settings(
        data_dir=work / name,
        database_url=database_url,
        spool_commit_interval_ms=0.5,
        digest_poll_interval_ms=5,
    )


@contextmanager
def postgres(work: Path) -> Iterator[tuple[PgCluster, str]]:
    """A started cluster of the scenario's own and a fresh database URL on it."""
    cluster = PgCluster()
    try:
        cluster.start()
        yield cluster, cluster.create_database("tracebox")
    finally:
        cluster.close()


@contextmanager
def serving(settings: Settings, **kwargs: object) -> Iterator[LiveServer]:
    server = start_server(settings, **kwargs)  # type: ignore[arg-type]
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def opened(settings: Settings) -> Iterator[Database]:
    db = Database(settings.resolved_database_url())
    try:
        yield db
    finally:
        db.dispose()


def envelope_url(server: LiveServer, project_id: int) -> str:
    return f"{server.url}/api/{project_id}/envelope/"


def log_since(server: LiveServer, offset: int) -> str:
    return server.log()[offset:]


def database_outage(work: Path) -> FaultResult:
    """PostgreSQL stopped for 20 s under load: known keys keep getting 200 from the spool."""
    result = FaultResult("database down 20 s", recovery="database back -> all stored")
    with postgres(work) as (cluster, url):
        settings = server_settings(work, url)
        env = {"TRACEBOX_LOG_REMINDER_SECONDS": "5"}
        with serving(settings, env=env) as server:
            project, key = server.create_project("acme/outage")
            with opened(settings) as db:
                load = Load(envelope_url(server, project["id"]), key["public_key"], rate=25)
                with load:
                    load.wait_acks(100)
                    log_offset = len(server.log())
                    cluster.stop("fast")
                    down_at = time.monotonic()
                    time.sleep(OUTAGE_SECONDS)  # the outage itself: its length is the scenario
                    outage_log = log_since(server, log_offset)
                    cluster.start()
                    up_at = time.monotonic()
                    caught_up = load.acked  # digested once the digest caught up
                    wait_for(lambda: caught_up <= tally(db, project["id"]).stored, timeout=120)
                    result.recovery_seconds = time.monotonic() - up_at
                    load.wait_acks(100)
                during = load.statuses(down_at, up_at)
                result.expect(
                    set(during) == {200} and during[200] >= 100,
                    f"answers during the outage: {dict(during)} (want only 200)",
                )
                result.expect(set(load.statuses()) == {200}, f"answers: {dict(load.statuses())}")
                settle(result, db, project["id"], load.acked)
                lines = outage_log.splitlines()
                result.expect(
                    "Traceback" not in outage_log and len(lines) <= 30,
                    f"{len(lines)} log lines during the outage (want a few, no tracebacks); "
                    f"most frequent: {_most_frequent(lines)}",
                )
                result.expect(
                    "database unavailable" in outage_log,
                    "the outage's start was not logged",
                )
                result.expect(
                    "over after" in log_since(server, log_offset),
                    "the outage's end was not logged",
                )
    return result


def two_nodes(work: Path) -> FaultResult:
    """Two nodes on one machine and one PostgreSQL, both under load: each digest keeps to
    its own cursors, so events, sessions and dropped items are each counted once."""
    result = FaultResult("two nodes, one database", recovery="load stopped -> all stored")
    with postgres(work) as (_, url):
        first, second = server_settings(work, url, "node-a"), server_settings(work, url, "node-b")
        with serving(first) as a, serving(second) as b:
            project, key = a.create_project("acme/nodes")
            with opened(first) as db:
                loads = [
                    Load(envelope_url(node, project["id"]), key["public_key"], rate=40)
                    for node in (a, b)
                ]
                for load in loads:
                    load.start()
                try:
                    wait_for(lambda: all(len(load.acked) >= 1500 for load in loads), timeout=120)
                finally:
                    for load in loads:
                        load.stop()
                stopped = time.monotonic()
                acked = loads[0].acked | loads[1].acked
                result.expect(
                    all(set(load.statuses()) == {200} for load in loads),
                    f"answers: {[dict(load.statuses()) for load in loads]}",
                )
                settle(result, db, project["id"], acked)
                result.recovery_seconds = time.monotonic() - stopped
                with db.read() as conn:
                    nodes = conn.execute(sa.text("SELECT DISTINCT node FROM spool_cursors")).all()
                result.expect(len(nodes) <= 2, f"cursor rows of {len(nodes)} nodes (want 2)")
    return result


def small_spool_cap(work: Path, seconds: float = 60.0) -> FaultResult:
    """A 1 MiB spool cap under load for a minute, with 16 MiB segments: the cap counts
    undigested bytes only, so ingestion never wedges, and finished segments are deleted,
    their cursor rows with them. Then the digest is paused (SIGSTOP) until the backlog
    reaches the cap: ingestion answers 503 with Retry-After, the episode is logged once
    when it starts and once when it ends, and ingestion recovers by itself (SIGCONT)."""
    result = FaultResult(f"spool cap 1 MiB, {seconds:.0f} s", recovery="load stopped -> all stored")
    settings = server_settings(work, "")
    env = {
        "TRACEBOX_SPOOL_MAX_BYTES": str(1024 * 1024),
        "TRACEBOX_SPOOL_SEGMENT_BYTES": str(16 * 1024 * 1024),
        "TRACEBOX_SPOOL_SEGMENT_MAX_AGE_SECONDS": "10",
    }
    with serving(settings, env=env) as server:
        project, key = server.create_project("acme/cap")
        with opened(settings) as db:
            load = Load(envelope_url(server, project["id"]), key["public_key"], padding=4096)
            with load:
                started = time.monotonic()
                time.sleep(seconds)  # the length of the load is the scenario
                steady_until = time.monotonic()
                paused = _pause_digest_until_spool_full(server, load)
                load.wait_acks(50)  # recovered by itself
            stopped = time.monotonic()
            windows = [
                load.statuses(t, t + 5)[200] for t in range(int(started), int(steady_until) - 5, 5)
            ]
            result.expect(min(windows) > 0, f"a 5 s window without acknowledgements: {windows}")
            answers = load.statuses(started, steady_until)
            result.expect(answers[200] >= 0.99 * sum(answers.values()), f"answers: {dict(answers)}")
            written = answers[200] * 4096 * 3 // 4  # at least: the padding, compressed
            refusals = load.refusals()
            full = [a for a in refusals if a.status == 503 and "spool is full" in a.detail]
            result.expect(
                len(full) == len(refusals) and all(a.retry_after for a in full),
                f"refusals other than 503 spool full with Retry-After: {refusals[:3]}",
            )
            result.expect(
                len(load.refusals(paused)) >= 20, "the paused digest did not fill the spool"
            )
            settle(result, db, project["id"], load.acked)
            result.recovery_seconds = time.monotonic() - stopped
            one_more = Load(envelope_url(server, project["id"]), key["public_key"], senders=1)
            with one_more:  # admitted now the backlog is digested: ends an episode still open
                one_more.wait_acks(1)
            log = server.log()
            starts = log.count("spool full, answering 503: spool is full (")
            ends = log.count("spool full, answering 503: over after")
            result.expect(
                1 <= starts == ends <= len(full),
                f"{len(full)} spool-full 503s logged as {starts} starts and {ends} ends "
                "(want each episode's start and end, not a line per refusal)",
            )
            on_disk = sum(p.stat().st_size for p in settings.spool_dir.glob("*.seg"))
            result.expect(
                written > 16 * 1024 * 1024 and on_disk < 16 * 1024 * 1024,
                f"{on_disk} bytes left on disk after {written} bytes of events",
            )
            stale = _wait_for_no_stale_cursors(db, settings.spool_dir)
            result.expect(
                not stale,
                f"cursor rows of deleted segments were kept: {sorted(stale)[:3]} "
                f"({len(stale)} rows)",
            )
    return result


def _pause_digest_until_spool_full(server: LiveServer, load: Load) -> float:
    """Stop the background process (SIGSTOP) until 20 requests were refused, then let it
    go on (SIGCONT); return when the pause started."""
    _, report = health(server)
    pid = report["units"]["digest"]["pid"]
    os.kill(pid, signal.SIGSTOP)
    paused = time.monotonic()
    try:
        wait_for(lambda: len(load.refusals(paused)) >= 20, timeout=60)
    finally:
        os.kill(pid, signal.SIGCONT)
    return paused


def _wait_for_no_stale_cursors(db: Database, spool_dir: Path, timeout: float = 30) -> set[str]:
    """Cursor rows naming a segment file no longer on disk, once the digest had ``timeout``
    to forget them (it deletes a finished segment's file first, then its row): empty when
    the digest prunes the rows of the segments it deleted."""

    def stale() -> set[str]:
        with db.read() as conn:
            rows = {row[0] for row in conn.execute(sa.select(spool_cursors.c.segment))}
        return rows - {p.name for p in spool_dir.glob("*.seg")}

    with suppress(AssertionError):  # reported by the caller, with the rows left
        wait_for(lambda: not stale(), timeout=timeout, interval=0.2)
    return stale()


class SmallDiskUnavailable(Exception):
    """A small filesystem cannot be mounted here (mounting a tmpfs needs root)."""


@contextmanager
def small_disk(path: Path, size_mib: int) -> Iterator[None]:
    """A real ``size_mib`` MiB filesystem (tmpfs) at ``path``, unmounted afterwards."""
    path.mkdir(parents=True, exist_ok=True)
    mount = ["mount", "-t", "tmpfs", "-o", f"size={size_mib}m", "tmpfs", str(path)]
    try:
        done = subprocess.run(mount, capture_output=True, text=True, check=False)
    except FileNotFoundError as e:  # no mount(8) at all
        raise SmallDiskUnavailable(str(e)) from e
    if done.returncode != 0:
        raise SmallDiskUnavailable(done.stderr.strip() or "mount failed")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


def disk_full(work: Path) -> FaultResult:
    """A 32 MiB spool disk filled during a database outage: ingestion refuses with 503 and
    Retry-After before writing (8 MiB kept free), then recovers by itself."""
    result = FaultResult("disk nearly full", recovery="database back -> accepting again")
    with postgres(work) as (cluster, url):
        settings = server_settings(work, url)
        env = {
            "TRACEBOX_SPOOL_MIN_FREE_BYTES": str(8 * 1024 * 1024),
            "TRACEBOX_SPOOL_SEGMENT_BYTES": str(2 * 1024 * 1024),
            "TRACEBOX_SPOOL_SEGMENT_MAX_AGE_SECONDS": "2",
            "TRACEBOX_LOG_REMINDER_SECONDS": "5",
        }
        with small_disk(settings.spool_dir, 32), serving(settings, env=env) as server:
            project, key = server.create_project("acme/disk")
            with opened(settings) as db:
                load = Load(envelope_url(server, project["id"]), key["public_key"], padding=16384)
                with load:
                    load.wait_acks(50)
                    cluster.stop("fast")
                    down_at = time.monotonic()
                    wait_for(lambda: len(load.refusals(down_at)) >= 20, timeout=120)
                    cluster.start()
                    up_at = time.monotonic()
                    wait_for(lambda: load.statuses(up_at)[200] > 0, timeout=120)
                    result.recovery_seconds = time.monotonic() - up_at
                    load.wait_acks(50)
                refusals = load.refusals()
                result.expect(
                    all(
                        a.status == 503 and "disk nearly full" in a.detail and a.retry_after
                        for a in refusals
                    ),
                    f"refusals other than 503 disk nearly full: {refusals[:3]}",
                )
                settle(result, db, project["id"], load.acked)
                log = server.log()
                result.expect(
                    "spool write failed" not in log and "No space left" not in log,
                    "a write reached the full disk (it should have been refused before)",
                )
                mentions = log.count("disk nearly full")
                result.expect(
                    1 <= mentions <= 40 and "disk nearly full, answering 503: over" in log,
                    f"disk full logged {mentions} times (want a start, reminders, an end)",
                )
    return result


def health(server: LiveServer) -> tuple[int, dict[str, Any]]:
    try:
        r = httpx.get(f"{server.url}/-/health", timeout=5)
    except httpx.TransportError:
        return 0, {}
    return r.status_code, r.json()


def digest_crash(work: Path) -> FaultResult:
    """SIGKILL of the digest under load: serve restarts it, /-/health shows it dead, then
    back with one restart; ingestion goes on throughout."""
    result = FaultResult("digest killed", recovery="kill -> digest alive again")
    settings = server_settings(work, "")
    with serving(settings) as server:
        project, key = server.create_project("acme/crash")
        with opened(settings) as db:
            load = Load(envelope_url(server, project["id"]), key["public_key"])
            with load:
                load.wait_acks(200)
                _, before = health(server)
                pid = before["units"]["digest"]["pid"]
                os.kill(pid, signal.SIGKILL)
                killed_at = time.monotonic()
                seen_dead = wait_for(lambda: _unit_dead(server), timeout=30, interval=0.02)
                code, report = wait_for(lambda: _unit_back(server, pid), timeout=60)
                result.recovery_seconds = time.monotonic() - killed_at
                load.wait_acks(200)
            result.expect(
                seen_dead[0] == 503 and "digest is not running" in seen_dead[1]["problems"],
                f"health while the digest was dead: {seen_dead}",
            )
            result.expect(
                code == 200 and report["units"]["digest"]["restarts"] == 1,
                f"health after the restart: {code} {report}",
            )
            result.expect(set(load.statuses()) == {200}, f"answers: {dict(load.statuses())}")
            result.expect(
                f"background process (pid {pid}) was killed by SIGKILL; restarting it"
                in server.log(),
                "the restart was not logged",
            )
            settle(result, db, project["id"], load.acked)
    return result


def _unit_dead(server: LiveServer) -> tuple[int, dict[str, Any]] | None:
    code, report = health(server)
    return (code, report) if report and not report["units"]["digest"]["alive"] else None


def _unit_back(server: LiveServer, old_pid: int) -> tuple[int, dict[str, Any]] | None:
    code, report = health(server)
    digest = report.get("units", {}).get("digest", {})
    return (code, report) if digest.get("alive") and digest.get("pid") != old_pid else None


def group_members(pgid: int) -> list[str]:
    """Processes still in the process group ``pgid`` (from /proc)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid:  # fields after "(comm)": state, ppid, pgrp
            members.append(stat.parent.name)
    return members


def graceful_stop(work: Path, *, whole_group: bool) -> FaultResult:
    """SIGTERM under load (to serve alone, as docker stop does, or to its whole process
    group, as systemd does): every request sent before the signal gets its answer (none
    is cut), serve exits 0 within the bound, no process is left, and after a restart
    every acknowledged envelope is stored once."""
    who = "process group" if whole_group else "main process"
    result = FaultResult(f"SIGTERM to the {who}", recovery="SIGTERM -> serve exited")
    settings = server_settings(work, "")
    bound = SHUTDOWN_BOUND_S
    with serving(settings) as server:
        project, key = server.create_project("acme/stop")
        load = Load(envelope_url(server, project["id"]), key["public_key"], senders=8)
        with load:
            load.wait_acks(300)
            pid = server.process.pid
            sent_at = time.monotonic()
            os.killpg(pid, signal.SIGTERM) if whole_group else os.kill(pid, signal.SIGTERM)
            try:
                code = server.process.wait(timeout=bound + 5)
            except subprocess.TimeoutExpired:
                code = None
            result.recovery_seconds = time.monotonic() - sent_at
            server.stopped = True
        result.expect(code == 0, f"serve exited with {code} (want 0 within {bound:.0f} s)")
        try:
            wait_for(lambda: not group_members(pid), timeout=5)
        except AssertionError:
            result.notes.append(f"processes left behind: {group_members(pid)}")
        refused = {a.status for a in load.answers if a.status not in (0, 200)}
        result.expect(not refused, f"requests answered {refused} while stopping")
        # In-flight requests finish: only a request written after the signal may find its
        # connection or the listener closed (status 0); one written before it (its bytes in
        # the server's socket) gets its answer.
        cut = [a for a in load.answers if a.status == 0 and a.sent < sent_at]
        result.expect(
            not cut,
            f"{len(cut)} requests written before SIGTERM got no answer "
            f"(written {[round(a.sent - sent_at, 3) for a in cut[:5]]} s before it)",
        )
        log = server.log()
        result.expect(
            "background process stopped (exited with code 0)" in log,
            "the background process did not stop cleanly",
        )
    with serving(settings), opened(settings) as db:
        settle(result, db, project["id"], load.acked)
    return result


def node_crash(work: Path) -> FaultResult:
    """SIGKILL of every process of the node under load, then a restart."""
    result = FaultResult("node killed (SIGKILL)", recovery="restart -> all stored")
    settings = server_settings(work, "")
    with serving(settings, workers=2) as server:
        project, key = server.create_project("acme/kill")
        load = Load(envelope_url(server, project["id"]), key["public_key"], senders=8)
        with load:
            load.wait_acks(400)
            server.kill()
    restarted_at = time.monotonic()
    with serving(settings), opened(settings) as db:
        settle(result, db, project["id"], load.acked)
        result.recovery_seconds = time.monotonic() - restarted_at
    return result


def run_tracebox(settings: Settings, *args: str, timeout: float = 30) -> tuple[int, str]:
    """Run ``tracebox ARGS`` in its own session; kill the whole session if it overstays."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tracebox", *args],
        env=tracebox_env(settings),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        return -1, output
    return process.returncode, output


def second_instance(work: Path) -> FaultResult:
    """``serve``, ``digest`` and ``digest --once`` started on a data directory in use, under
    load: each exits 1 at once with a message; the running node's metrics and spool are
    untouched and it keeps acknowledging."""
    result = FaultResult("second instance, same data dir", recovery="start -> refused")
    settings = server_settings(work, "")
    with serving(settings) as server:
        project, key = server.create_project("acme/lock")
        metrics_dir = settings.data_dir / "metrics"
        with opened(settings) as db:
            load = Load(envelope_url(server, project["id"]), key["public_key"])
            with load:
                load.wait_acks(100)
                before = _snapshot(metrics_dir)
                for args in (
                    ("serve", "--port", str(free_port())),
                    ("digest",),
                    ("digest", "--once"),
                ):
                    started = time.monotonic()
                    status, output = run_tracebox(settings, *args, timeout=20)
                    result.recovery_seconds = max(
                        result.recovery_seconds, time.monotonic() - started
                    )
                    result.expect(
                        status == 1
                        and "is in use by another tracebox process" in output
                        and f"(pid {server.process.pid})" in output,
                        f"tracebox {' '.join(args)}: exit {status}: {output[-300:]}",
                    )
                result.expect(_snapshot(metrics_dir) == before, "the metrics folder changed")
                scrape = httpx.get(f"{server.url}/-/metrics", timeout=5)
                result.expect(scrape.status_code == 200, f"/-/metrics: {scrape.status_code}")
                load.wait_acks(100)
            result.expect(set(load.statuses()) == {200}, f"answers: {dict(load.statuses())}")
            settle(result, db, project["id"], load.acked)
    return result


def _snapshot(directory: Path) -> dict[str, int]:
    """File names and inodes: a wiped and recreated folder has new inodes."""
    return {p.name: p.stat().st_ino for p in directory.iterdir()}


def _most_frequent(lines: list[str], shown: int = 3) -> str:
    """The log lines seen most often, timestamps aside: what floods the log."""
    counts = Counter(line.split(" ", 2)[-1][:160] for line in lines)
    return "; ".join(f"{n} x {text!r}" for text, n in counts.most_common(shown))
