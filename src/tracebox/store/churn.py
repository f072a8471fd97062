"""PostgreSQL: the errors the digest updates in every batch leave a dead row version and
index entries behind each time (their ``last_seen`` and ``events_count`` are in the
list's indexes, so no update is HOT). Until autovacuum comes by, once a minute at best,
every lookup of a busy error walks all its versions: the foreign-key checks of the
batch's events and tag rows (one per new row) read 135 buffers each in a loaded
benchmark run and took more PostgreSQL CPU than all the batch's statements together
(docs/performance.md). Vacuuming the table often keeps them at a few buffers.
"""

from __future__ import annotations

from tracebox.store.database import Database
from tracebox.store.tables import errors


def vacuum_churned(db: Database) -> None:
    """``VACUUM`` the errors table (PostgreSQL; nothing on SQLite, which keeps no row
    versions). ``SKIP_LOCKED``: when another node or autovacuum is at it, skip."""
    if db.is_sqlite:
        return
    with db.engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT")
        conn.exec_driver_sql(f"VACUUM (SKIP_LOCKED) {errors.name}")
