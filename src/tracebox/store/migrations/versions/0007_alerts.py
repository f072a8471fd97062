"""alerts: rules, actions, the outbox of deliveries, cooldowns, people's settings

Revision ID: 0007_alerts
Revises: 0002_reliability
Create Date: 2026-11-23 10:50:06.115205
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_alerts"
down_revision = "0002_reliability"
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table(
        "alert_rules",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "project_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("trigger", sa.String(length=32), nullable=False),
        sa.Column("threshold", sa.Integer(), nullable=True),
        sa.Column("threshold_kind", sa.String(length=16), nullable=True),
        sa.Column("window_minutes", sa.Integer(), nullable=True),
        sa.Column("compare_factor", sa.Float(), nullable=True),
        sa.Column("crash_free_below", sa.Float(), nullable=True),
        sa.Column("environment", sa.String(length=255), nullable=True),
        sa.Column("min_level", sa.String(length=16), nullable=True),
        sa.Column("tag_key", sa.String(length=200), nullable=True),
        sa.Column("tag_value", sa.String(length=200), nullable=True),
        sa.Column("release", sa.String(length=255), nullable=True),
        sa.Column("cooldown_minutes", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("alert_rules", schema=None) as batch_op:
        batch_op.create_index("ix_alert_rules_project", ["project_id", "id"], unique=False)

    op.create_table(
        "alert_user_settings",
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "project_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("email", sa.Boolean(), nullable=False),
        sa.Column("triggers", sa.String(length=255), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "project_id"),
    )
    op.create_table(
        "alert_actions",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("rule_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "project_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("channel", sa.String(length=16), nullable=False),
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("target_display", sa.String(length=255), nullable=False),
        sa.Column("encrypted_secret", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["rule_id"], ["alert_rules.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("alert_actions", schema=None) as batch_op:
        batch_op.create_index("ix_alert_actions_rule", ["rule_id", "id"], unique=False)

    op.create_table(
        "alert_cooldowns",
        sa.Column("rule_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("subject", sa.String(length=300), nullable=False),
        sa.Column("fired_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["rule_id"], ["alert_rules.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("rule_id", "subject"),
    )
    op.create_table(
        "alert_notifications",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "project_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("rule_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("error_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("folded", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["rule_id"], ["alert_rules.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("alert_notifications", schema=None) as batch_op:
        batch_op.create_index(
            "ix_alert_notifications_rule_time", ["rule_id", "created_at"], unique=False
        )

    op.create_table(
        "alert_deliveries",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "project_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column(
            "notification_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("action_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("channel", sa.String(length=16), nullable=False),
        sa.Column("recipient", sa.String(length=255), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("idempotency_key", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.Float(), nullable=False),
        sa.Column("deadline_at", sa.Float(), nullable=False),
        sa.Column("lease_owner", sa.String(length=32), nullable=True),
        sa.Column("lease_until", sa.Float(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("response_status", sa.Integer(), nullable=True),
        sa.Column("response_excerpt", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.Column("sent_at", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(["action_id"], ["alert_actions.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(
            ["notification_id"], ["alert_notifications.id"], ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("idempotency_key"),
    )
    with op.batch_alter_table("alert_deliveries", schema=None) as batch_op:
        batch_op.create_index(
            "ix_alert_deliveries_due", ["status", "next_attempt_at"], unique=False
        )
        batch_op.create_index("ix_alert_deliveries_notification", ["notification_id"], unique=False)
        batch_op.create_index(
            "ix_alert_deliveries_project", ["project_id", "created_at", "id"], unique=False
        )


def downgrade() -> None:

    with op.batch_alter_table("alert_deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_alert_deliveries_project")
        batch_op.drop_index("ix_alert_deliveries_notification")
        batch_op.drop_index("ix_alert_deliveries_due")

    op.drop_table("alert_deliveries")
    with op.batch_alter_table("alert_notifications", schema=None) as batch_op:
        batch_op.drop_index("ix_alert_notifications_rule_time")

    op.drop_table("alert_notifications")
    op.drop_table("alert_cooldowns")
    with op.batch_alter_table("alert_actions", schema=None) as batch_op:
        batch_op.drop_index("ix_alert_actions_rule")

    op.drop_table("alert_actions")
    op.drop_table("alert_user_settings")
    with op.batch_alter_table("alert_rules", schema=None) as batch_op:
        batch_op.drop_index("ix_alert_rules_project")

    op.drop_table("alert_rules")
