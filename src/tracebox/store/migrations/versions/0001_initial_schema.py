"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-22 03:24:06.002288
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("path", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("monitor_access_level", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("path"),
    )
    op.create_table(
        "spool_cursors",
        sa.Column("segment", sa.String(length=255), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("segment"),
    )
    op.create_table(
        "users",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("username", sa.String(length=255), nullable=False),
        sa.Column("email", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("is_admin", sa.Boolean(), nullable=False),
        sa.Column("is_blocked", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("email"),
        sa.UniqueConstraint("username"),
    )
    op.create_table(
        "client_keys",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "project_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("public_key", sa.String(length=32), nullable=False),
        sa.Column("secret_key", sa.String(length=32), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("public_key"),
    )
    with op.batch_alter_table("client_keys", schema=None) as batch_op:
        batch_op.create_index("ix_client_keys_project", ["project_id", "id"], unique=False)

    op.create_table(
        "dropped_items",
        sa.Column(
            "project_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("item_type", sa.String(length=64), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("project_id", "item_type"),
    )
    op.create_table(
        "error_tracking_settings",
        sa.Column(
            "project_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("integrated", sa.Boolean(), nullable=False),
        sa.Column("api_url", sa.Text(), nullable=True),
        sa.Column("encrypted_token", sa.Text(), nullable=True),
        sa.Column("project_name", sa.String(length=255), nullable=True),
        sa.Column("organization_name", sa.String(length=255), nullable=True),
        sa.Column("external_project_id", sa.String(length=64), nullable=True),
        sa.Column("external_project_slug", sa.String(length=255), nullable=True),
        sa.Column("external_organization_slug", sa.String(length=255), nullable=True),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("project_id"),
    )
    op.create_table(
        "errors",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "project_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("grouping_hash", sa.String(length=32), nullable=False),
        sa.Column("grouping_version", sa.String(length=32), nullable=False),
        sa.Column("fingerprint", sa.Text(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("type", sa.String(length=255), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("culprit", sa.Text(), nullable=False),
        sa.Column("platform", sa.String(length=64), nullable=False),
        sa.Column("level", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("regressed", sa.Boolean(), nullable=False),
        sa.Column("first_seen", sa.Float(), nullable=False),
        sa.Column("last_seen", sa.Float(), nullable=False),
        sa.Column("first_release", sa.String(length=255), nullable=True),
        sa.Column("last_release", sa.String(length=255), nullable=True),
        sa.Column("events_count", sa.BigInteger(), nullable=False),
        sa.Column("users_count", sa.BigInteger(), nullable=False),
        sa.Column("last_event_id", sa.String(length=32), nullable=True),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("project_id", "grouping_hash", name="uq_errors_project_hash"),
    )
    with op.batch_alter_table("errors", schema=None) as batch_op:
        batch_op.create_index(
            "ix_errors_list_first_seen", ["project_id", "status", "first_seen", "id"], unique=False
        )
        batch_op.create_index(
            "ix_errors_list_frequency", ["project_id", "status", "events_count", "id"], unique=False
        )
        batch_op.create_index(
            "ix_errors_list_last_seen", ["project_id", "status", "last_seen", "id"], unique=False
        )

    op.create_table(
        "personal_access_tokens",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("token_digest", sa.String(length=64), nullable=False),
        sa.Column("scopes", sa.String(length=255), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.Column("revoked", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("last_used_at", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_digest"),
    )
    with op.batch_alter_table("personal_access_tokens", schema=None) as batch_op:
        batch_op.create_index("ix_personal_access_tokens_user", ["user_id", "id"], unique=False)

    op.create_table(
        "project_members",
        sa.Column(
            "project_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("access_level", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("project_id", "user_id"),
    )
    with op.batch_alter_table("project_members", schema=None) as batch_op:
        batch_op.create_index("ix_project_members_user", ["user_id", "project_id"], unique=False)

    op.create_table(
        "session_aggregates",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "project_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("release", sa.String(length=255), nullable=False),
        sa.Column("environment", sa.String(length=255), nullable=False),
        sa.Column("started", sa.Float(), nullable=False),
        sa.Column("did", sa.String(length=255), nullable=True),
        sa.Column("exited", sa.Integer(), nullable=False),
        sa.Column("errored", sa.Integer(), nullable=False),
        sa.Column("crashed", sa.Integer(), nullable=False),
        sa.Column("abnormal", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("session_aggregates", schema=None) as batch_op:
        batch_op.create_index(
            "ix_session_aggregates_release", ["project_id", "release", "environment"], unique=False
        )

    op.create_table(
        "sessions",
        sa.Column(
            "project_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("sid", sa.String(length=64), nullable=False),
        sa.Column("did", sa.String(length=255), nullable=True),
        sa.Column("release", sa.String(length=255), nullable=False),
        sa.Column("environment", sa.String(length=255), nullable=False),
        sa.Column("started", sa.Float(), nullable=False),
        sa.Column("timestamp", sa.Float(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("errors", sa.Integer(), nullable=False),
        sa.Column("duration", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("project_id", "sid"),
    )
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.create_index(
            "ix_sessions_release", ["project_id", "release", "environment"], unique=False
        )

    op.create_table(
        "error_hourly",
        sa.Column("error_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("hour", sa.BigInteger(), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["error_id"], ["errors.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("error_id", "hour"),
    )
    op.create_table(
        "error_users",
        sa.Column("error_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("user_key", sa.String(length=255), nullable=False),
        sa.ForeignKeyConstraint(["error_id"], ["errors.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("error_id", "user_key"),
    )
    op.create_table(
        "events",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "project_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("error_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("event_id", sa.String(length=32), nullable=False),
        sa.Column("timestamp", sa.Float(), nullable=False),
        sa.Column("received_at", sa.Float(), nullable=False),
        sa.Column("level", sa.String(length=16), nullable=False),
        sa.Column("environment", sa.String(length=255), nullable=True),
        sa.Column("release", sa.String(length=255), nullable=True),
        sa.Column("user_key", sa.String(length=255), nullable=True),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["error_id"], ["errors.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("project_id", "event_id", name="uq_events_project_event"),
    )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.create_index("ix_events_error_time", ["error_id", "timestamp", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_index("ix_events_error_time")

    op.drop_table("events")
    op.drop_table("error_users")
    op.drop_table("error_hourly")
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_index("ix_sessions_release")

    op.drop_table("sessions")
    with op.batch_alter_table("session_aggregates", schema=None) as batch_op:
        batch_op.drop_index("ix_session_aggregates_release")

    op.drop_table("session_aggregates")
    with op.batch_alter_table("project_members", schema=None) as batch_op:
        batch_op.drop_index("ix_project_members_user")

    op.drop_table("project_members")
    with op.batch_alter_table("personal_access_tokens", schema=None) as batch_op:
        batch_op.drop_index("ix_personal_access_tokens_user")

    op.drop_table("personal_access_tokens")
    with op.batch_alter_table("errors", schema=None) as batch_op:
        batch_op.drop_index("ix_errors_list_last_seen")
        batch_op.drop_index("ix_errors_list_frequency")
        batch_op.drop_index("ix_errors_list_first_seen")

    op.drop_table("errors")
    op.drop_table("error_tracking_settings")
    op.drop_table("dropped_items")
    with op.batch_alter_table("client_keys", schema=None) as batch_op:
        batch_op.drop_index("ix_client_keys_project")

    op.drop_table("client_keys")
    op.drop_table("users")
    op.drop_table("spool_cursors")
    op.drop_table("projects")
