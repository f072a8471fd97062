"""Engine setup for SQLite (embedded default) and PostgreSQL, and schema migrations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.pool import NullPool

from tracebox.store import sqlite_space

SQLITE_BUSY_TIMEOUT_MS = 30_000  # a reader or writer waits this long for the write lock


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def make_engine(url: str, *, pool_size: int = 5) -> Engine:
    """An engine with the pragmas SQLite needs to be a production database (STYLE rule 5)."""
    if url.startswith("sqlite"):
        _ensure_sqlite_dir(url)
        engine = create_engine(
            url,
            connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000, "check_same_thread": False},
            poolclass=NullPool if ":memory:" in url else None,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
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


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # we emit BEGIN ourselves
    cursor = dbapi_connection.cursor()
    sqlite_space.new_file_pragmas(cursor)  # before WAL: a new file's page size and vacuum mode
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA cache_size=-32000")  # 32 MiB page cache per connection
    cursor.close()


def _sqlite_begin(connection: Any) -> None:
    mode = connection.info.get("sqlite_begin", "BEGIN")
    connection.exec_driver_sql(mode)


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def pending_migrations(engine: Engine, url: str) -> bool:
    """True when the schema is not at the newest migration (or not there at all)."""
    script = ScriptDirectory.from_config(alembic_config(url))
    with engine.connect() as conn:
        current = set(MigrationContext.configure(conn).get_current_heads())
    return current != set(script.get_heads())


def migrate(url: str) -> None:
    """Apply every migration not yet applied (idempotent); then convert an older SQLite
    file to incremental auto-vacuum, which cannot run inside a migration."""
    command.upgrade(alembic_config(url), "head")
    path = _sqlite_path(url)
    if path is not None:
        sqlite_space.convert(path)
