"""What the benchmark reads from the database: event counts and the bytes stored."""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine


class Counter:
    """Counts the project's events and errors; samples the event count in a thread."""

    def __init__(self, url: str, project_id: int) -> None:
        sqlite = url.startswith("sqlite")
        args: dict[str, Any] = {"connect_args": {"timeout": 30}} if sqlite else {"pool_size": 2}
        self.engine: Engine = create_engine(url, **args)
        self.project_id = project_id
        self.samples: list[tuple[float, int]] = []  # (monotonic time, events)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def events(self) -> int:
        """Rows in the events table: exact, but a scan (used once, at the end)."""
        return self._scalar("SELECT count(*) FROM events WHERE project_id = :p")

    def counted(self) -> int:
        """Events counted on the project's errors (``errors.events_count``, written in the
        digest's transaction): cheap enough to poll while the server is loaded."""
        sql = "SELECT coalesce(sum(events_count), 0) FROM errors WHERE project_id = :p"
        count = self._scalar(sql)
        self.samples.append((time.monotonic(), count))
        return count

    def errors(self) -> int:
        return self._scalar("SELECT count(*) FROM errors WHERE project_id = :p")

    def _scalar(self, sql: str) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(text(sql), {"p": self.project_id}).scalar_one())

    def wait_for(self, target: int, timeout: float, interval: float = 0.05) -> tuple[float, int]:
        """Poll until the counted events reach ``target`` or ``timeout`` passes; return the
        time of the last poll and the count it saw."""
        deadline = time.monotonic() + timeout
        while True:
            count = self.counted()
            now = time.monotonic()
            if count >= target or now > deadline:
                return now, count
            time.sleep(interval)

    def start(self, interval: float = 0.25) -> None:
        def run() -> None:
            while not self._stop.wait(interval):
                self.counted()

        self._thread = threading.Thread(target=run, name="db-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()

    def count_at(self, moment: float) -> tuple[float, int]:
        """The last sample taken at or before ``moment``."""
        return max((s for s in self.samples if s[0] <= moment), default=(moment, 0))

    def dispose(self) -> None:
        self.engine.dispose()


@dataclass
class Footprint:
    """Database size: total bytes and bytes per table (with its indexes)."""

    total: int
    tables: dict[str, int] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)


def sqlite_footprint(path: Path) -> Footprint:
    """File size after a TRUNCATE checkpoint (the WAL folded in), pages per table via
    ``dbstat``. Run with the server stopped, so the checkpoint can complete."""
    conn = sqlite3.connect(path)
    try:
        busy, log, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        tables: dict[str, int] = {}
        try:
            rows = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
            tables = {name: int(size) for name, size in rows}
        except sqlite3.OperationalError:
            pass  # SQLite built without SQLITE_ENABLE_DBSTAT_VTAB
        pragma = {k: conn.execute(f"PRAGMA {k}").fetchone()[0] for k in _SQLITE_PRAGMAS}
    finally:
        conn.close()
    wal = path.with_name(path.name + "-wal")
    total = path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    return Footprint(total, tables, pragma | {"checkpoint_busy": busy, "wal_frames": log})


_SQLITE_PRAGMAS = ("page_size", "page_count", "freelist_count", "auto_vacuum")


def postgres_footprint(url: str) -> Footprint:
    """``pg_database_size`` and ``pg_total_relation_size`` per table, after VACUUM."""
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text("VACUUM ANALYZE"))
            size = conn.execute(text("SELECT pg_database_size(current_database())"))
            total = int(size.scalar_one())
            rows = conn.execute(
                text("SELECT relname, pg_total_relation_size(relid) FROM pg_stat_user_tables")
            ).all()
            version = conn.execute(text("SHOW server_version")).scalar_one()
            fsync = conn.execute(text("SHOW fsync")).scalar_one()
            commit = conn.execute(text("SHOW synchronous_commit")).scalar_one()
    finally:
        engine.dispose()
    tables = {name: int(size) for name, size in rows}
    notes = {"server_version": version, "fsync": fsync, "synchronous_commit": commit}
    return Footprint(total, tables, notes)


def footprint(url: str) -> Footprint:
    if url.startswith("sqlite"):
        return sqlite_footprint(Path(url.split(":///", 1)[1]))
    return postgres_footprint(url)
