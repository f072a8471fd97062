"""The few statements whose syntax differs between SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Table
from sqlalchemy.dialects import postgresql, sqlite


def insert(conn: Connection, table: Table) -> Any:
    """An INSERT that supports ``on_conflict_do_nothing/do_update`` on both databases."""
    return insert_for(conn.dialect.name, table)


def insert_for(dialect: str, table: Table) -> Any:
    """``insert`` for a dialect's name: for a statement built once per dialect."""
    if dialect == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)
