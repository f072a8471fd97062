"""sdkdata: attachments, user feedback, client reports and logs (issue 12)

Revision ID: 0009_sdkdata
Revises: 0008_workflow

New tables only: nothing stored before changes.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_sdkdata"
down_revision = "0008_workflow"
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _project() -> sa.Column[int]:
    return sa.Column("project_id", Id, nullable=False)


def _project_fk() -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE")


def upgrade() -> None:
    op.create_table(
        "attachments",
        sa.Column("id", Id, autoincrement=True, nullable=False),
        _project(),
        sa.Column("event_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("content_type", sa.String(length=255), nullable=False),
        sa.Column("attachment_type", sa.String(length=64), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("stored_bytes", sa.BigInteger(), nullable=False),
        sa.Column("sha1", sa.String(length=40), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        _project_fk(),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "project_id", "event_id", "name", "sha1", name="uq_attachments_event_file"
        ),
    )
    op.create_index(
        "ix_attachments_project_created", "attachments", ["project_id", "created_at", "size"]
    )
    op.create_table(
        "attachment_chunks",
        sa.Column("attachment_id", Id, nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["attachment_id"], ["attachments.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("attachment_id", "seq"),
    )
    op.create_table(
        "user_reports",
        sa.Column("id", Id, autoincrement=True, nullable=False),
        _project(),
        sa.Column("feedback_id", sa.String(length=32), nullable=False),
        sa.Column("event_id", sa.String(length=32), nullable=True),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("email", sa.String(length=75), nullable=False),
        sa.Column("comments", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("source", sa.String(length=200), nullable=False),
        sa.Column("release", sa.String(length=200), nullable=True),
        sa.Column("environment", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        _project_fk(),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("project_id", "feedback_id", name="uq_user_reports_feedback"),
    )
    op.create_index("ix_user_reports_event", "user_reports", ["project_id", "event_id"])
    op.create_index("ix_user_reports_created", "user_reports", ["project_id", "created_at", "id"])
    op.create_table(
        "client_reports",
        _project(),
        sa.Column("hour", sa.BigInteger(), nullable=False),
        sa.Column("category", sa.String(length=32), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        _project_fk(),
        sa.PrimaryKeyConstraint("project_id", "hour", "category", "reason"),
    )
    op.create_table(
        "logs",
        sa.Column("id", Id, autoincrement=True, nullable=False),
        _project(),
        sa.Column("timestamp", sa.Float(), nullable=False),
        sa.Column("level", sa.String(length=8), nullable=False),
        sa.Column("severity_number", sa.Integer(), nullable=True),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("trace_id", sa.String(length=32), nullable=True),
        sa.Column("span_id", sa.String(length=16), nullable=True),
        sa.Column("release", sa.String(length=200), nullable=True),
        sa.Column("environment", sa.String(length=200), nullable=True),
        sa.Column("logger", sa.String(length=200), nullable=True),
        sa.Column("attributes", sa.Text(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        _project_fk(),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_logs_project_time", "logs", ["project_id", "timestamp", "id"])
    op.create_index("ix_logs_trace", "logs", ["project_id", "trace_id"])
    op.create_table(
        "log_hourly",
        _project(),
        sa.Column("hour", sa.BigInteger(), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        _project_fk(),
        sa.PrimaryKeyConstraint("project_id", "hour"),
    )


def downgrade() -> None:
    for table in ("log_hourly", "logs", "client_reports", "user_reports"):
        op.drop_table(table)
    op.drop_table("attachment_chunks")
    op.drop_table("attachments")
