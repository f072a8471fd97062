"""Spool cursors per node: isolated, monotonic, forgotten with their segments (issue 9)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command

from tracebox.config import Settings
from tracebox.store import Database, cursors
from tracebox.store.engine import alembic_config


def test_each_node_reads_and_writes_only_its_own_rows(db: Database) -> None:
    with db.write() as conn:
        cursors.advance(conn, "node-a", {"a1.seg": 10, "a2.seg": 20})
        cursors.advance(conn, "node-b", {"b1.seg": 500})
        cursors.advance(conn, "node-a", {"a1.seg": 30})
    with db.write() as conn:
        assert cursors.load(conn, "node-a") == {"a1.seg": 30, "a2.seg": 20}
        assert cursors.load(conn, "node-b") == {"b1.seg": 500}
        cursors.forget(conn, "node-a", ["a1.seg", "b1.seg"])
        assert cursors.load(conn, "node-a") == {"a2.seg": 20}
        assert cursors.load(conn, "node-b") == {"b1.seg": 500}  # not node-a's to forget


def test_a_position_never_moves_backwards(db: Database) -> None:
    with db.write() as conn:
        cursors.advance(conn, "n", {"s.seg": 100, "t.seg": 5})
        cursors.advance(conn, "n", {"s.seg": 40, "t.seg": 6})  # a stale write for s.seg
    with db.read() as conn:
        assert cursors.load(conn, "n") == {"s.seg": 100, "t.seg": 6}


def test_upgrade_keeps_old_rows_and_the_owning_node_adopts_them(settings: Settings) -> None:
    url = settings.resolved_database_url()
    command.upgrade(alembic_config(url), "0001")
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as conn:
        conn.execute(
            sa.text("INSERT INTO spool_cursors (segment, position) VALUES (:s, :p)"),
            [{"s": "mine.seg", "p": 77}, {"s": "theirs.seg", "p": 88}],
        )
    engine.dispose()
    db = Database(url)
    try:
        db.migrate()
        with db.write() as conn:
            assert cursors.load(conn, cursors.LEGACY_NODE) == {"mine.seg": 77, "theirs.seg": 88}
            assert cursors.adopt_legacy(conn, "me", ["mine.seg", "new.seg"]) == 1
            assert cursors.load(conn, "me") == {"mine.seg": 77}
            assert cursors.load(conn, cursors.LEGACY_NODE) == {"theirs.seg": 88}
    finally:
        db.dispose()
