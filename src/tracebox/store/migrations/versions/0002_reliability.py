"""reliability: spool cursors per node

Revision ID: 0002_reliability
Revises: 0004_boundaries

Each node's digest reads and writes only its own cursor rows (issue 9): the table gains
a ``node`` column and its key becomes ``(node, segment)``. Rows written before this
revision get node ``''``; a digest adopts those whose segment is in its own spool on
its first start (``store.cursors.adopt_legacy``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_reliability"
down_revision = "0004_boundaries"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Copy through a new table: changing a primary key in place is not portable (SQLite
    # cannot, and PostgreSQL would keep the old constraint's name).
    op.create_table(
        "spool_cursors_per_node",
        sa.Column("node", sa.String(length=64), nullable=False),
        sa.Column("segment", sa.String(length=255), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("node", "segment", name="pk_spool_cursors_per_node"),
    )
    op.execute(
        "INSERT INTO spool_cursors_per_node (node, segment, position) "
        "SELECT '', segment, position FROM spool_cursors"
    )
    op.drop_table("spool_cursors")
    op.rename_table("spool_cursors_per_node", "spool_cursors")


def downgrade() -> None:
    op.create_table(
        "spool_cursors_single",
        sa.Column("segment", sa.String(length=255), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("segment", name="pk_spool_cursors_single"),
    )
    op.execute(
        "INSERT INTO spool_cursors_single (segment, position) "
        "SELECT segment, MAX(position) FROM spool_cursors GROUP BY segment"
    )
    op.drop_table("spool_cursors")
    op.rename_table("spool_cursors_single", "spool_cursors")
