"""A database handle: read and write transactions over one engine, and one read
transaction shared by a whole web request.

A request (a UI page, an API call) reads through ``Database.read()`` many times: the
project and the user's role, the settings, the list, its hourly counts. Inside
``request_reads()`` those reads share one transaction, opened on the first read, so the
page is one consistent snapshot (REPEATABLE READ on PostgreSQL; SQLite's WAL read
transactions are snapshots already) and costs one connection checkout. A write commits
in its own transaction and ends the request's snapshot, so reads after it see it.

Every read query is bounded by ``query_timeout_ms`` (0: none): PostgreSQL cancels it
with ``statement_timeout``, SQLite through a progress handler; either way the caller
gets ``errors.QueryTimeout`` (503).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from sqlalchemy import Connection, Engine, event, text
from sqlalchemy.exc import OperationalError as _OperationalError

from tracebox.errors import QueryTimeout
from tracebox.store.engine import (
    SQLITE_CACHE_KIB,
    is_sqlite,
    make_engine,
    migrate,
    pending_migrations,
)

OperationalError = _OperationalError
SQLITE_PROGRESS_STEPS = 10_000  # VM instructions between two looks at the query clock
_CLOCK = "tracebox_query_clock"


class Database:
    """Owns the engine. SQLite writers take the write lock up front (BEGIN IMMEDIATE), so
    a read-then-write transaction never fails half way with SQLITE_BUSY."""

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 5,
        query_timeout_ms: float = 0,
        sqlite_cache_kib: int = SQLITE_CACHE_KIB,
    ) -> None:
        self.url = url
        self.engine: Engine = make_engine(
            url, pool_size=pool_size, sqlite_cache_kib=sqlite_cache_kib
        )
        self.is_sqlite = is_sqlite(self.engine)
        self.query_timeout_ms = query_timeout_ms
        if self.is_sqlite:
            event.listen(self.engine, "before_cursor_execute", _start_query_clock)

    def migrate(self) -> None:
        migrate(self.url)

    def needs_migration(self) -> bool:
        return pending_migrations(self.engine, self.url)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read transaction: the request's shared one inside ``request_reads()``."""
        shared = _request_reads.get()
        try:
            if shared is not None and shared.db is self:
                yield shared.connection()
                return
            with self.engine.connect() as conn, conn.begin():
                self._bound_reads(conn)
                try:
                    yield conn
                finally:
                    self._unbound_reads(conn)
        except OperationalError as e:
            if _is_cancelled(e):
                raise QueryTimeout(
                    f"The database did not answer within {self.query_timeout_ms:g} ms"
                ) from e
            raise

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
        shared = _request_reads.get()
        if shared is not None and shared.db is self:
            shared.close()  # later reads of this request see what was just written

    @contextmanager
    def request_reads(self) -> Iterator[RequestReads]:
        """Share one read transaction among the reads of the code run inside (contexts
        copied from here, such as the thread pool's, share it too). The caller closes
        the returned object when the request is over (``close()`` may block briefly)."""
        shared = RequestReads(self)
        token = _request_reads.set(shared)
        try:
            yield shared
        finally:
            _request_reads.reset(token)

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

    def _bound_reads(self, conn: Connection) -> None:
        if self.query_timeout_ms <= 0:
            return
        if not self.is_sqlite:
            conn.exec_driver_sql(f"SET LOCAL statement_timeout = {int(self.query_timeout_ms)}")
            return
        clock = _QueryClock(self.query_timeout_ms / 1000)
        conn.info[_CLOCK] = clock
        _sqlite(conn).set_progress_handler(clock.expired, SQLITE_PROGRESS_STEPS)

    def _unbound_reads(self, conn: Connection) -> None:
        if conn.info.pop(_CLOCK, None) is not None and not conn.closed:
            _sqlite(conn).set_progress_handler(None, 0)


class RequestReads:
    """The read transaction of one request, opened on first use."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._conn: Connection | None = None
        self._lock = threading.Lock()

    def connection(self) -> Connection:
        with self._lock:
            if self._conn is None:
                conn = self.db.engine.connect()
                if not self.db.is_sqlite:
                    conn = conn.execution_options(isolation_level="REPEATABLE READ")
                conn.begin()
                self.db._bound_reads(conn)
                self._conn = conn
            return self._conn

    @property
    def opened(self) -> bool:
        return self._conn is not None

    def close(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            try:
                self.db._unbound_reads(conn)
            finally:
                conn.close()  # rolls the read transaction back: it changed nothing


_request_reads: ContextVar[RequestReads | None] = ContextVar("tracebox_reads", default=None)


class _QueryClock:
    """SQLite's stand-in for ``statement_timeout``: each query gets ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = math.inf

    def start(self) -> None:
        self.deadline = time.monotonic() + self.seconds

    def expired(self) -> int:
        return 1 if time.monotonic() > self.deadline else 0  # non-zero interrupts the query


def _start_query_clock(conn: Connection, *_: Any) -> None:
    clock = conn.info.get(_CLOCK)
    if clock is not None:
        clock.start()


def _sqlite(conn: Connection) -> Any:
    return conn.connection.dbapi_connection


def _is_cancelled(e: OperationalError) -> bool:
    """SQLite's "interrupted" or PostgreSQL's query_canceled (SQLSTATE 57014)."""
    return getattr(e.orig, "sqlstate", None) == "57014" or str(e.orig) == "interrupted"
