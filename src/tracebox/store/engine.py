"""Engine setup for SQLite (embedded default) and PostgreSQL, and schema migrations."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.pool import NullPool

from tracebox.store import sqlite_space

if TYPE_CHECKING:
    from alembic.config import Config

# alembic is imported where it is used: it brings mako, pygments and every SQLAlchemy
# dialect (~12 MB resident), which only the process applying migrations needs (issue 10).

SQLITE_BUSY_TIMEOUT_MS = 30_000  # a reader or writer waits this long for the write lock
SQLITE_CACHE_KIB = 32_000  # page cache per connection (the web workers' default)
# A commit that leaves this many pages (16 KiB each) in the write-ahead log copies them
# into the database: 1.6 MiB per checkpoint instead of SQLite's 1,000 pages (16 MiB).
# Each checkpoint ends in two fsyncs that flush the log and the database; 32 MiB at once
# kept the disk busy ~100 ms, and the spool's fsync of every acknowledged event waited
# behind it: most open-loop runs at 1,000 events/s had a p99 over 40 ms (16-114 ms), on
# tmpfs 6 ms (docs/performance.md, "The open-loop p99 was the disk").
SQLITE_WAL_AUTOCHECKPOINT_PAGES = 100


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def make_engine(
    url: str, *, pool_size: int = 5, sqlite_cache_kib: int = SQLITE_CACHE_KIB
) -> Engine:
    """An engine with the pragmas SQLite needs to be a production database (STYLE rule 5).
    ``sqlite_cache_kib``: each connection's page cache (memory it keeps once filled)."""
    if url.startswith("sqlite"):
        _ensure_sqlite_dir(url)
        # A file's pool hands out the most recently used connection first: each connection
        # fills a page cache of its own, and cycling through the pool (FIFO) would hold
        # the same pages in every one of them.
        on_file = ":///" in url and _sqlite_path(url) is not None
        pool: dict[str, Any] = {"pool_use_lifo": True} if on_file else {}
        engine = create_engine(
            url,
            connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000, "check_same_thread": False},
            poolclass=NullPool if ":memory:" in url else None,
            **pool,
        )
        event.listen(engine, "connect", partial(_sqlite_pragmas, cache_kib=sqlite_cache_kib))
        event.listen(engine, "checkout", _sqlite_autocheckpoint_back)
        # pysqlite's own transaction handling defers BEGIN; issue BEGIN IMMEDIATE ourselves
        # for writers (Database.write) and plain BEGIN for readers.
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    return create_engine(url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True)


def _ensure_sqlite_dir(url: str) -> None:
    path = _sqlite_path(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)


def _sqlite_path(url: str) -> Path | None:
    if not url.startswith("sqlite"):
        return None
    path = url.split(":///", 1)[-1]
    return Path(path) if path and path != ":memory:" else None


def _sqlite_pragmas(dbapi_connection: Any, _record: Any, *, cache_kib: int) -> None:
    dbapi_connection.isolation_level = None  # we emit BEGIN ourselves
    cursor = dbapi_connection.cursor()
    sqlite_space.new_file_pragmas(cursor)  # before WAL: a new file's page size and vacuum mode
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute(f"PRAGMA cache_size=-{int(cache_kib)}")  # negative: KiB, not pages
    cursor.execute(f"PRAGMA wal_autocheckpoint={SQLITE_WAL_AUTOCHECKPOINT_PAGES}")
    cursor.close()


def _sqlite_autocheckpoint_back(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
    """A connection whose last transaction turned the checkpoints off (cleanup,
    ``sqlite_space.without_autocheckpoint``) checkpoints again for its next user."""
    if record.info.pop(sqlite_space.AUTOCHECKPOINT_OFF, False):
        dbapi_connection.execute(f"PRAGMA wal_autocheckpoint={SQLITE_WAL_AUTOCHECKPOINT_PAGES}")


def _sqlite_begin(connection: Any) -> None:
    mode = connection.info.get("sqlite_begin", "BEGIN")
    connection.exec_driver_sql(mode)


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def pending_migrations(engine: Engine, url: str) -> bool:
    """True when the schema is not at the newest migration (or not there at all)."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config(url))
    with engine.connect() as conn:
        current = set(MigrationContext.configure(conn).get_current_heads())
    return current != set(script.get_heads())


def migrate(url: str) -> None:
    """Apply every migration not yet applied (idempotent); then convert an older SQLite
    file to incremental auto-vacuum, which cannot run inside a migration."""
    from alembic import command

    command.upgrade(alembic_config(url), "head")
    path = _sqlite_path(url)
    if path is not None:
        sqlite_space.convert(path)
