"""The database's size on disk, and giving freed space back to the file system.

SQLite: databases use incremental auto-vacuum, so pages freed by deletions can be
returned a few at a time (``PRAGMA incremental_vacuum(N)``), each step a short write
transaction, instead of one ``VACUUM`` that locks and rewrites the whole file. A new
file is created that way (``new_file_pragmas``); an older one is converted once, by
``convert``, when ``tracebox migrate`` (or ``serve``, which migrates first) finds no
other process using it. PostgreSQL: autovacuum makes deleted rows' space reusable; files
do not shrink (docs/storage.md).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, text

log = logging.getLogger("tracebox.store")

# 16 KiB pages: an event row of 2-4 KB leaves on average half a row unused at the end of
# each page, and rows over 4 KB overflow 4 KiB pages. Measured (bench/storage_bench.py,
# docs/performance.md), bytes per event with a dictionary: 4 KiB 2,707, 8 KiB 2,329,
# 16 KiB 2,169; without: 4,581, 5,050, 4,355; the same CPU time per event.
PAGE_SIZE = 16384
AUTO_VACUUM_NONE = 0
AUTO_VACUUM_INCREMENTAL = 2


@dataclass(frozen=True)
class Space:
    """The database's bytes: the file (or files), the part in use, and the free part."""

    file_bytes: int
    used_bytes: int
    free_bytes: int  # free pages inside the file (SQLite), given back by incremental_vacuum
    exact: bool  # False: an estimate (PostgreSQL: stored bytes, its files never shrink)


def new_file_pragmas(cursor: Any) -> None:
    """Run before ``journal_mode=WAL`` on every connection: a new, empty file gets our
    page size and vacuum mode. Skipped for an existing file, where setting them would
    wait for the write lock and change nothing."""
    if cursor.execute("PRAGMA page_count").fetchone()[0] == 0:
        cursor.execute(f"PRAGMA page_size={PAGE_SIZE}")
        cursor.execute("PRAGMA auto_vacuum=INCREMENTAL")


def convert(path: Path) -> bool:
    """Convert an existing file to incremental auto-vacuum and ``PAGE_SIZE`` pages (one
    VACUUM, which needs free disk space about the file's size). Skipped, and tried again
    at the next ``migrate``, while another process has the database open. Returns whether
    the file is in the incremental mode now."""
    conn = sqlite3.connect(path, timeout=0.1, isolation_level=None)
    try:
        if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != AUTO_VACUUM_NONE:
            return True
        try:  # leaving WAL mode needs the only connection: proof nobody else is using it
            mode = conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
        except sqlite3.OperationalError:
            mode = "busy"
        if mode != "delete":
            log.warning("database in use: incremental auto-vacuum will be enabled at next start")
            return False
        return _vacuum_into_incremental(conn, path)
    finally:
        conn.close()


def _vacuum_into_incremental(conn: sqlite3.Connection, path: Path) -> bool:
    started = time.monotonic()
    size = path.stat().st_size
    log.info("converting %s (%d bytes) to incremental auto-vacuum, once", path, size)
    try:
        conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
        conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
        conn.execute("VACUUM")
    except sqlite3.OperationalError as e:  # e.g. the disk cannot hold a second copy
        log.warning("could not convert the database (%s); it keeps working as it is", e)
        return False
    finally:
        conn.execute("PRAGMA journal_mode=WAL")
    log.info("converted in %.1f s", time.monotonic() - started)
    return True


def space(conn: Connection) -> Space:
    if conn.dialect.name == "sqlite":
        return _sqlite_space(conn)
    return _postgres_space(conn)


def _sqlite_space(conn: Connection) -> Space:
    def pragma(name: str) -> int:
        return int(conn.exec_driver_sql(f"PRAGMA {name}").scalar_one())

    page = pragma("page_size")
    pages, free = pragma("page_count"), pragma("freelist_count")
    return Space(pages * page, (pages - free) * page, free * page, True)


def _postgres_space(conn: Connection) -> Space:
    size = int(conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one())
    stored = conn.execute(text("SELECT coalesce(sum(bytes), 0) FROM storage_usage")).scalar_one()
    return Space(size, int(stored), 0, False)


def incremental_vacuum(conn: Connection, pages: int) -> int:
    """Give back up to ``pages`` free pages to the file system in the caller's write
    transaction; returns how many (PostgreSQL: 0). One page per statement: a single
    step of ``PRAGMA incremental_vacuum`` frees one page, and pysqlite steps a statement
    without result columns once. (``executescript`` would step it to the end, but only
    after committing, so outside the transaction whose lock time cleanup measures.)"""
    if conn.dialect.name != "sqlite":
        return 0
    raw = conn.connection.driver_connection
    assert raw is not None
    free = int(raw.execute("PRAGMA freelist_count").fetchone()[0])
    for _ in range(min(free, pages)):
        raw.execute("PRAGMA incremental_vacuum(1)")
    return free - int(raw.execute("PRAGMA freelist_count").fetchone()[0])


def vacuum_mode(conn: Connection) -> int | None:
    if conn.dialect.name != "sqlite":
        return None
    return int(conn.exec_driver_sql("PRAGMA auto_vacuum").scalar_one())


AUTOCHECKPOINT_OFF = "tracebox.no_autocheckpoint"  # in a pooled connection's info


def without_autocheckpoint(conn: Connection) -> None:
    """Leave this connection's commits out of WAL checkpoints (SQLite): the committing
    connection runs them, and cleanup's lock-timed transactions should not include
    copying the log into the database. Cleanup checkpoints passively instead. Until the
    connection's next checkout: then ``engine`` turns the checkpoints back on (the digest
    may take this connection from the pool next, and must keep the log short)."""
    if conn.dialect.name == "sqlite" and not conn.info.get(AUTOCHECKPOINT_OFF):
        conn.exec_driver_sql("PRAGMA wal_autocheckpoint=0")
        conn.info[AUTOCHECKPOINT_OFF] = True


class Checkpoints:
    """Passive WAL checkpoints (SQLite's PASSIVE: it never takes the write lock), each
    saying about how many bytes the database wrote since the one before: the pages added
    to the log and as many copied into the database file, by any writer (PostgreSQL: no
    checkpoint, 0).

    SQLite reports the frames in the log and those copied so far; the log starts again
    at the first write after every frame was copied, so an unchanged report means nothing
    was written, and a report after a complete one counts from the start."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._last = (0, 0)  # frames in the log, frames copied: at the last checkpoint

    def __call__(self) -> int:
        if self.engine.dialect.name != "sqlite":
            return 0
        with self.engine.connect() as conn:
            raw = conn.connection.driver_connection
            assert raw is not None
            _, logged, copied = raw.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            page = int(raw.execute("PRAGMA page_size").fetchone()[0])
        logged, copied = max(0, int(logged)), max(0, int(copied))  # -1: not in WAL mode
        last_logged, last_copied = self._last
        self._last = (logged, copied)
        if (logged, copied) == (last_logged, last_copied):
            return 0
        if last_logged == last_copied:  # the log was copied whole: it started again
            return (logged + copied) * page
        return (max(0, logged - last_logged) + max(0, copied - last_copied)) * page
