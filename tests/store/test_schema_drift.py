"""The migrations and ``store/tables.py`` describe the same schema (Alembic's compare of
the migrated database against the tables), on SQLite and PostgreSQL."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from tracebox.store import Database
from tracebox.store.tables import metadata


def test_migrations_match_the_tables(db: Database) -> None:
    with db.engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "compare_server_default": False}
        )
        drift = [d for d in compare_metadata(context, metadata) if not _alembic_bookkeeping(d)]
    assert drift == [], "\n".join(str(d) for d in drift)


def _alembic_bookkeeping(diff: object) -> bool:
    return "alembic_version" in str(diff)
