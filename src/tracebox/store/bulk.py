"""Set-based helpers for the digest's batch writes: look many keys up at once, and write
many rows with one statement per batch on both databases.

``RowsInsert`` is an ``INSERT ... ON CONFLICT`` of many rows. On SQLite it is one
``executemany`` of a statement compiled once, handed to the driver as tuples (sqlite3
runs the loop in C; SQLAlchemy's per-row parameter processing cost more than the
inserts). On PostgreSQL it is one ``INSERT ... SELECT FROM json_to_recordset(rows)``
(``json_recordset``): one statement parsed and planned once per batch, whatever its
number of rows, instead of one execution per row (or a statement with tens of thousands
of parameters), its rows written as one JSON text by ``orjson``; a ``bytea`` column's
values (the events' payloads) are parameters of their own beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property, lru_cache
from itertools import chain
from operator import itemgetter
from typing import Any

import orjson
from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    Connection,
    LargeBinary,
    String,
    Table,
    Text,
    any_,
    bindparam,
    cast,
    column,
    func,
    select,
    tuple_,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import StatementError
from sqlalchemy.types import TypeDecorator, TypeEngine

CHUNK = 400  # keys per IN (...) query: 800 parameters for pairs, well within limits
# Rows per statement when each row's bytea is a parameter of its own: PostgreSQL takes at
# most 65,535 parameters in a statement.
MAX_BINARY_ROWS = 8192

# The SET clause of ON CONFLICT DO UPDATE, from the statement's ``excluded`` row.
Update = Callable[[Any], dict[str, Any]]


def rows_matching(
    conn: Connection,
    key: tuple[Column[Any], Column[Any]],
    keys: Sequence[tuple[Any, Any]],
    *columns: Column[Any],
) -> list[tuple[Any, ...]]:
    """``key`` and ``columns`` of the rows whose ``key`` pair is one of ``keys``.

    PostgreSQL: one statement whatever the number of keys (``json_recordset``).
    SQLite: the keys as a ``VALUES`` list joined to the table per ``CHUNK`` keys, its
    text made once per chunk size (SQLAlchemy's expanding IN rendered every key's
    parameters anew on each call: more CPU than the lookup). Not ``(a, b) IN (VALUES
    ...)``: SQLite 3.40 answers that by scanning the whole index, a cost that grew with
    the table (on 1,000,000 events, half the digest's time; docs/performance.md)."""
    if not keys:
        return []
    if conn.dialect.name == "postgresql":
        stmt, rows = _matching_postgresql(key, columns)
        return [tuple(row) for row in conn.execute(stmt, {"rows": rows(keys)})]
    keys = list(dict.fromkeys(keys))  # a join answers a key once per time it is asked
    found: list[tuple[Any, ...]] = []
    for start in range(0, len(keys), CHUNK):
        chunk = keys[start : start + CHUNK]
        sql = _matching_sqlite(key, columns, len(chunk))
        found += [tuple(row) for row in conn.exec_driver_sql(sql, tuple(chain(*chunk)))]
    return found


def in_ids(dialect: str, column: ColumnElement[int]) -> ColumnElement[bool]:
    """``column`` is one of the integers bound as ``ids`` (a list, of any length).

    One statement text whatever the list's length: SQLAlchemy's expanding ``IN``
    rendered a parameter per id on every execution (``workflow_digest._states`` took
    4.4 us/event on SQLite, now 0.7). SQLite reads the list as a JSON array
    (``json_each``, built in since 3.38), PostgreSQL as an array (``= ANY``). Build the
    statement once per ``dialect`` name."""
    if dialect == "postgresql":
        return column == any_(bindparam("ids", type_=postgresql.ARRAY(BigInteger())))
    ids = func.json_each(bindparam("ids", type_=_JsonIds())).table_valued("value")
    return column.in_(select(ids.c.value))


class _JsonIds(TypeDecorator[Sequence[int]]):
    """A list of integers bound as the text of a JSON array (SQLite's json_each reads it)."""

    impl = String
    cache_ok = True

    def process_bind_param(self, value: Sequence[int] | None, dialect: Any) -> str | None:
        return None if value is None else orjson.dumps(list(value)).decode()


@lru_cache(maxsize=64)
def _matching_sqlite(
    key: tuple[Column[Any], Column[Any]], columns: tuple[Column[Any], ...], count: int
) -> str:
    quote = sqlite.dialect().identifier_preparer.quote
    table = quote(key[0].table.name)
    names = ", ".join(f"{table}.{quote(c.name)}" for c in (*key, *columns))
    values = ", ".join(["(?, ?)"] * count)
    # CROSS JOIN keeps the keys the outer loop: one index search per key.
    on = f"{table}.{quote(key[0].name)} = k.column1 AND {table}.{quote(key[1].name)} = k.column2"
    return f"SELECT {names} FROM (VALUES {values}) AS k CROSS JOIN {table} ON {on}"


@lru_cache(maxsize=64)
def _matching_postgresql(
    key: tuple[Column[Any], Column[Any]], columns: tuple[Column[Any], ...]
) -> tuple[Any, Callable[[Sequence[tuple[Any, ...]]], str]]:
    """The statement, and how to write the keys for its ``rows``."""
    # Strings unbounded: a cast to varchar(n) would cut a longer key to a false match.
    types = [String() if isinstance(c.type, String) else c.type for c in key]
    wanted = json_recordset([("k_0", types[0]), ("k_1", types[1])])
    stmt = select(*key, *columns).where(tuple_(*key).in_(select(wanted.c.k_0, wanted.c.k_1)))
    return stmt, json_rows(("k_0", "k_1"), types)


def json_recordset(columns: Sequence[tuple[str, TypeEngine[Any]]]) -> Any:
    """PostgreSQL: the rows bound as ``rows`` (the text ``json_rows`` makes) as a table of
    ``columns``: ``json_to_recordset(CAST(:rows AS JSON)) AS anon(name type, ...)``.

    Why not ``unnest`` of one array per column: psycopg dumps a list into an array
    element by element in Python, with quoting and escaping; with 160 events a batch that
    was a fifth of the digest's CPU on PostgreSQL (``ListDumper._dump_list``, py-spy,
    docs/performance.md). ``orjson`` writes the same rows in C."""
    rows = cast(bindparam("rows", type_=Text()), postgresql.JSON)
    typed = [column(name, type_) for name, type_ in columns]
    return func.json_to_recordset(rows).table_valued(*typed).render_derived(with_types=True)


def json_rows(
    names: Sequence[str], types: Sequence[TypeEngine[Any]]
) -> Callable[[Sequence[tuple[Any, ...]]], str]:
    """A function that writes rows (tuples in ``names`` order) as ``json_recordset`` reads
    them: a JSON array of objects, ``bytes`` in PostgreSQL's hex form of ``bytea``."""
    binary = [i for i, t in enumerate(types) if isinstance(t, LargeBinary)]

    def text(rows: Sequence[tuple[Any, ...]]) -> str:
        if binary:
            rows = [_hex_bytes(row, binary) for row in rows]
        try:
            return orjson.dumps([dict(zip(names, row, strict=True)) for row in rows]).decode()
        except orjson.JSONEncodeError as e:
            # As a database refusal: the digest then writes the batch record by record and
            # sets aside the one that fails, instead of retrying the whole batch forever.
            raise StatementError("a row cannot be written as JSON", None, None, e) from e

    return text


def _hex_bytes(row: tuple[Any, ...], at: Sequence[int]) -> tuple[Any, ...]:
    values = list(row)
    for i in at:
        if values[i] is not None:
            values[i] = "\\x" + values[i].hex()
    return tuple(values)


class SqliteStatement:
    """A statement compiled once for sqlite3 and run with ``executemany`` on tuples,
    each row's values in ``names`` order, handed to the driver as they are: every
    parameter is numbered (``?N``) after its name's place in ``names``, so a name used
    twice is bound once, and the statement's own literals come after them."""

    def __init__(self, stmt: Any, names: Sequence[str], column_keys: Sequence[str] = ()) -> None:
        compiled = stmt.compile(dialect=sqlite.dialect(), column_keys=list(column_keys) or None)
        order = list(names)
        constants: list[Any] = []
        numbers: list[int] = []
        for name in compiled.positiontup or ():
            if name not in order:
                order.append(name)
                constants.append(compiled.params[name])
            numbers.append(order.index(name) + 1)
        parts = compiled.string.split("?")
        if len(parts) != len(numbers) + 1 or set(numbers) != set(range(1, len(order) + 1)):
            raise ValueError(f"every name must be a parameter, and only they a '?': {parts[0]}")
        self.sql: str = parts[0] + "".join(
            f"?{n}{p}" for n, p in zip(numbers, parts[1:], strict=True)
        )
        self._constants = tuple(constants)

    def executemany(self, conn: Connection, rows: Sequence[tuple[Any, ...]]) -> None:
        constants = self._constants
        params = [(*row, *constants) for row in rows] if constants else list(rows)
        conn.exec_driver_sql(self.sql, params)


class RowsInsert:
    """``INSERT INTO table (columns) ... ON CONFLICT (key) DO NOTHING`` (or ``DO UPDATE
    SET update(excluded)``), optionally ``RETURNING returning`` (PostgreSQL only).

    Rows are tuples in ``columns`` order; pass them sorted by ``key`` (so two writers
    lock keys in one order) and without two rows of one key.
    """

    def __init__(
        self,
        table: Table,
        columns: Sequence[str],
        key: Sequence[str],
        update: Update | None = None,
        returning: Sequence[str] = (),
    ) -> None:
        self.table = table
        self.columns = tuple(columns)
        self.key = tuple(key)
        self.update = update
        self.returning = tuple(returning)

    def execute(self, conn: Connection, rows: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """Write ``rows``; the ``returning`` columns of the rows inserted (PostgreSQL)."""
        if not rows:
            return []
        if conn.dialect.name == "postgresql":
            found: list[tuple[Any, ...]] = []
            step = MAX_BINARY_ROWS if self._binary else len(rows)
            for start in range(0, len(rows), step):
                stmt, params = self._postgresql_batch(rows[start : start + step])
                result = conn.execute(stmt, params)
                found += [tuple(r) for r in result] if self.returning else []
            return found
        self._sqlite.executemany(conn, rows)
        return []

    def insert_new(
        self, conn: Connection, rows: Sequence[tuple[Any, ...]], *, known_new: bool = False
    ) -> set[tuple[Any, ...]]:
        """Insert the rows whose key is not taken yet; return the keys inserted (needs
        ``returning`` = ``key``). On SQLite the write transaction holds the database
        lock, so the rows found absent (or ``known_new``) are exactly those inserted; on
        PostgreSQL another node may insert a key meanwhile, so the insert reports."""
        if conn.dialect.name == "postgresql":
            return set(self.execute(conn, rows))
        keys = list(map(itemgetter(*(self.columns.index(k) for k in self.key)), rows))
        taken: set[tuple[Any, ...]] = set()
        if not known_new and keys:
            pair = (self.table.c[self.key[0]], self.table.c[self.key[1]])
            taken = set(rows_matching(conn, pair, keys))
        self.execute(conn, [r for r, k in zip(rows, keys, strict=True) if k not in taken])
        return set(keys) - taken

    @cached_property
    def _binary(self) -> tuple[int, ...]:
        """Where the ``bytea`` columns are in a row (the events' payloads)."""
        return tuple(
            i for i, c in enumerate(self.columns) if isinstance(self.table.c[c].type, LargeBinary)
        )

    @cached_property
    def _json_types(self) -> list[TypeEngine[Any]]:
        """The columns' types in the rows' JSON: a ``bytea`` column holds the row's place
        (from 1) instead of its value, which is a parameter of its own."""
        types = [self.table.c[c].type for c in self.columns]
        return [BigInteger() if i in self._binary else t for i, t in enumerate(types)]

    @cached_property
    def _json(self) -> Callable[[Sequence[tuple[Any, ...]]], str]:
        return json_rows(self.columns, self._json_types)

    def _postgresql_batch(self, rows: Sequence[tuple[Any, ...]]) -> tuple[Any, dict[str, Any]]:
        """The statement for ``rows`` and its parameters.

        A ``bytea`` value is not written into the JSON: PostgreSQL's JSON parser then
        read its hex form character by character, 56 us of PostgreSQL's CPU for an event
        of 3.6 KB, half of its insert (docs/performance.md). Each value is a parameter of
        ``unnest(ARRAY[...]) WITH ORDINALITY`` instead, sent as it is, and joined to its
        row by the row's place. The statement is made per size class (a power of two, the
        rest of the array NULL), so a few are compiled, not one per batch length."""
        if not self._binary:
            return self._postgresql(0), {"rows": self._json(rows)}
        size = 1 << max(len(rows) - 1, 0).bit_length()
        params: dict[str, Any] = {}
        numbered = []
        for place, row in enumerate(rows, 1):
            values = list(row)
            for i in self._binary:
                params[f"b{i}_{place}"] = values[i]
                values[i] = place
            numbered.append(tuple(values))
        for i in self._binary:
            params.update((f"b{i}_{place}", None) for place in range(len(rows) + 1, size + 1))
        params["rows"] = self._json(numbered)
        return self._postgresql(size), params

    @lru_cache(maxsize=32)  # noqa: B019 (module-level statements, kept for good anyway)
    def _postgresql(self, size: int) -> Any:
        """The statement for up to ``size`` rows (0: no ``bytea`` column)."""
        source = json_recordset(list(zip(self.columns, self._json_types, strict=True)))
        picked = {c: source.c[c] for c in self.columns}
        joined: Any = source
        for i in self._binary:
            name = self.columns[i]
            values = postgresql.array(
                [bindparam(f"b{i}_{place}", type_=LargeBinary) for place in range(1, size + 1)]
            )
            bound = (
                func.unnest(values)
                .table_valued(column(name, LargeBinary), with_ordinality="place")
                .render_derived()
            )
            joined = joined.join(bound, bound.c.place == source.c[name])
            picked[name] = bound.c[name]
        stmt = postgresql.insert(self.table).from_select(
            list(self.columns), select(*picked.values()).select_from(joined)
        )
        stmt = self._on_conflict(stmt)
        if self.returning:
            stmt = stmt.returning(*(self.table.c[c] for c in self.returning))
        return stmt

    @cached_property
    def _sqlite(self) -> SqliteStatement:
        stmt = self._on_conflict(sqlite.insert(self.table))
        return SqliteStatement(stmt, self.columns, column_keys=self.columns)

    def _on_conflict(self, stmt: Any) -> Any:
        if self.update is None:
            return stmt.on_conflict_do_nothing(index_elements=list(self.key))
        return stmt.on_conflict_do_update(
            index_elements=list(self.key), set_=self.update(stmt.excluded)
        )
