"""A database handle: read and write transactions over one engine."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import OperationalError as _OperationalError

from tracebox.store.engine import is_sqlite, make_engine, migrate

OperationalError = _OperationalError


class Database:
    """Owns the engine. SQLite writers take the write lock up front (BEGIN IMMEDIATE), so
    a read-then-write transaction never fails half way with SQLITE_BUSY."""

    def __init__(self, url: str, *, pool_size: int = 5) -> None:
        self.url = url
        self.engine: Engine = make_engine(url, pool_size=pool_size)
        self.is_sqlite = is_sqlite(self.engine)

    def migrate(self) -> None:
        migrate(self.url)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def write(self) -> Iterator[Connection]:
        with self.engine.connect() as conn:
            if self.is_sqlite:
                conn.info["sqlite_begin"] = "BEGIN IMMEDIATE"
            try:
                with conn.begin():
                    yield conn
            finally:
                conn.info.pop("sqlite_begin", None)

    def ping(self) -> bool:
        """True when the database answers a trivial query."""
        try:
            with self.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            return True
        except Exception:
            return False

    def dispose(self) -> None:
        self.engine.dispose()
