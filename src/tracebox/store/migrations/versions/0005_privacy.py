"""privacy settings per project (issue 11)

Revision ID: 0005_privacy
Revises: 0007_alerts
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_privacy"
down_revision = "0007_alerts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "privacy_settings",
        sa.Column(
            "project_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("scrub_data", sa.Boolean(), nullable=False),
        sa.Column("sensitive_fields", sa.Text(), nullable=False),
        sa.Column("safe_fields", sa.Text(), nullable=False),
        sa.Column("ip_mode", sa.String(length=16), nullable=False),
        sa.Column("drop_user_ip", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("project_id"),
    )


def downgrade() -> None:
    op.drop_table("privacy_settings")
