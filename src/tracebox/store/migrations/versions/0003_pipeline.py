"""pipeline: error_hashes, error_tags, projects.config_version and grouping_epoch

Revision ID: 0003_pipeline
Revises: 0006_sourcemaps
Create Date: 2026-11-23

``error_hashes`` is filled from the errors' own hashes. ``error_tags`` is filled from
every stored event (each payload decoded once, in chunks): the details page reads its
top tags from there, so errors stored before this migration keep theirs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from tracebox.protocol.tags import event_tags
from tracebox.store import payloads

revision = "0003_pipeline"
down_revision = "0006_sourcemaps"
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
BACKFILL_CHUNK_EVENTS = 2000


def upgrade() -> None:
    op.add_column(
        "projects",
        sa.Column("config_version", sa.BigInteger(), nullable=False, server_default="0"),
    )
    op.add_column(
        "projects",
        sa.Column("grouping_epoch", sa.BigInteger(), nullable=False, server_default="0"),
    )
    op.create_table(
        "error_hashes",
        sa.Column("project_id", Id, nullable=False),
        sa.Column("hash", sa.String(length=32), nullable=False),
        sa.Column("error_id", Id, nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["error_id"], ["errors.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("project_id", "hash"),
    )
    op.create_index("ix_error_hashes_error", "error_hashes", ["error_id"])
    op.create_table(
        "error_tags",
        sa.Column("project_id", Id, nullable=False),
        sa.Column("error_id", Id, nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("value", sa.String(length=200), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.Column("last_seen", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["error_id"], ["errors.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("error_id", "key", "value"),
    )
    op.execute(
        "INSERT INTO error_hashes (project_id, hash, error_id) "
        "SELECT project_id, grouping_hash, id FROM errors"
    )
    _backfill_error_tags(op.get_bind())


def downgrade() -> None:
    op.drop_table("error_tags")
    op.drop_index("ix_error_hashes_error", table_name="error_hashes")
    op.drop_table("error_hashes")
    op.drop_column("projects", "grouping_epoch")
    op.drop_column("projects", "config_version")


def _backfill_error_tags(conn: sa.Connection) -> None:
    """Count every stored event's tags, ``BACKFILL_CHUNK_EVENTS`` events at a time."""
    events = sa.table(
        "events",
        sa.column("id", Id),
        sa.column("project_id", Id),
        sa.column("error_id", Id),
        sa.column("timestamp", sa.Float()),
        sa.column("payload", sa.LargeBinary()),
    )
    last_id = 0
    while True:
        rows = conn.execute(
            sa.select(events)
            .where(events.c.id > last_id)
            .order_by(events.c.id)
            .limit(BACKFILL_CHUNK_EVENTS)
        ).all()
        if not rows:
            return
        last_id = rows[-1].id
        _add_counts(conn, _count_tags(rows))


def _count_tags(rows: Sequence[Any]) -> dict[tuple[int, int, str, str], list[float]]:
    counts: dict[tuple[int, int, str, str], list[float]] = defaultdict(lambda: [0, 0.0])
    for row in rows:
        for key, value in event_tags(payloads.decode(row.payload)):
            entry = counts[(row.error_id, row.project_id, key, value)]
            entry[0] += 1
            entry[1] = max(entry[1], row.timestamp)
    return counts


def _add_counts(conn: sa.Connection, counts: dict[tuple[int, int, str, str], list[float]]) -> None:
    """Add one chunk's counts; rows already there from an earlier chunk are updated."""
    params = [
        {"e": e, "p": p, "k": k, "v": v, "n": int(n), "t": t}
        for (e, p, k, v), (n, t) in sorted(counts.items())
    ]
    if params:
        conn.execute(
            sa.text(
                "INSERT INTO error_tags (error_id, project_id, key, value, count, last_seen) "
                "VALUES (:e, :p, :k, :v, :n, :t) "
                "ON CONFLICT (error_id, key, value) DO UPDATE SET "
                "count = error_tags.count + excluded.count, "
                "last_seen = CASE WHEN excluded.last_seen > error_tags.last_seen "
                "THEN excluded.last_seen ELSE error_tags.last_seen END"
            ),
            params,
        )
