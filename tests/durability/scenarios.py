"""Fault scenarios with real processes: each runs ``tracebox serve`` under load, injects one
fault, lets it recover, and counts what the database holds against what was acknowledged.

Every scenario returns a ``FaultResult``; ``notes`` lists each expectation of the
scenario that did not hold (empty when all held). The tests in this package assert on
them one scenario at a time; ``python -m tests.durability.faults`` runs them all and
prints the table recorded in docs/deployment.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa

from tests.durability.load import Load
from tests.durability.pgcluster import PgCluster
from tests.helpers import LiveServer, start_server, wait_for
from tracebox.config import Settings
from tracebox.store import Database
from tracebox.store.tables import dropped_items, errors, events, session_aggregates

OUTAGE_SECONDS = 20.0


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
    number of stored events: any excess was counted twice.
    """
    try:
        wait_for(lambda: acked <= tally(db, project_id).stored, timeout=timeout, interval=0.2)
    except AssertionError:
        result.notes.append(f"not every acknowledged envelope was stored within {timeout:.0f} s")
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
    result.expect(
        min(counts.events_counted, counts.sessions_exited, counts.profiles_dropped) >= rows,
        "a stored envelope is missing its event count, session or dropped item",
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


def envelope_url(server: LiveServer, project_id: int) -> str:
    return f"{server.url}/api/{project_id}/envelope/"


def log_since(server: LiveServer, offset: int) -> str:
    return server.log()[offset:]


def timed(condition: Callable[[], object], *, timeout: float) -> float:
    """Seconds until ``condition()`` holds."""
    started = time.monotonic()
    wait_for(condition, timeout=timeout, interval=0.1)
    return time.monotonic() - started


def database_outage(work: Path) -> FaultResult:
    """PostgreSQL stopped for 20 s under load: known keys keep getting 200 from the spool."""
    result = FaultResult("database down 20 s", recovery="database back -> all stored")
    with postgres(work) as (cluster, url):
        settings = server_settings(work, url)
        env = {"TRACEBOX_LOG_REMINDER_SECONDS": "5"}
        with serving(settings, env=env) as server:
            project, key = server.create_project("acme/outage")
            db = Database(settings.resolved_database_url())
            try:
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
                    f"{len(lines)} log lines during the outage (want a few, no tracebacks)",
                )
                result.expect(
                    "database unavailable" in outage_log,
                    "the outage's start was not logged",
                )
                result.expect(
                    "over after" in log_since(server, log_offset),
                    "the outage's end was not logged",
                )
            finally:
                db.dispose()
    return result
