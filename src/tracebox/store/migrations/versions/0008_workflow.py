"""triage workflow: assignees, resolution and ignore conditions, activity, environments

Revision ID: 0008_workflow
Revises: 0005_privacy
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0008_workflow"
down_revision = "0005_privacy"
branch_labels = None
depends_on = None


def Id() -> sa.types.TypeEngine[int]:  # a fresh type object per column, as in tables.py
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


ERROR_COLUMNS: list[tuple[str, sa.types.TypeEngine[Any]]] = [
    ("resolution", sa.String(16)),
    ("resolved_release", sa.String(255)),
    ("resolved_at", sa.Float()),
    ("ignore_until", sa.Float()),
    ("ignore_count", sa.BigInteger()),
    ("ignore_events_base", sa.BigInteger()),
    ("ignore_user_count", sa.BigInteger()),
    ("ignore_users_base", sa.BigInteger()),
    ("inbox_at", sa.Float()),
]


def upgrade() -> None:
    # Plain ADD COLUMN (no table rebuild, which on SQLite would cascade into the events);
    # assignee_id names a user without a FOREIGN KEY (users are blocked, never deleted).
    op.add_column("errors", sa.Column("assignee_id", Id()))
    for name, type_ in ERROR_COLUMNS:
        op.add_column("errors", sa.Column(name, type_))
    op.create_index("ix_errors_assignee", "errors", ["assignee_id", "status", "last_seen", "id"])
    op.create_index("ix_errors_ignore_until", "errors", ["ignore_until"])
    _create_tables()
    _backfill()


def _create_tables() -> None:
    op.create_table(
        "error_activity",
        sa.Column("id", Id(), autoincrement=True, nullable=False),
        sa.Column("project_id", Id(), nullable=False),
        sa.Column("error_id", Id(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("user_id", Id()),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float()),
        sa.Column("text", sa.Text()),
        sa.Column("data", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["error_id"], ["errors.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_error_activity_error", "error_activity", ["error_id", "id"])
    op.create_table(
        "error_redirects",
        sa.Column("error_id", Id(), nullable=False),
        sa.Column("project_id", Id(), nullable=False),
        sa.Column("target_id", Id(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["target_id"], ["errors.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("error_id"),
    )
    op.create_table(
        "project_environments",
        sa.Column("project_id", Id(), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("first_seen", sa.Float(), nullable=False),
        sa.Column("last_seen", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("project_id", "name"),
    )
    op.create_index("ix_releases_project_created", "releases", ["project_id", "created_at"])
    op.create_index(
        "ix_error_tags_search", "error_tags", ["project_id", "key", "value", "error_id"]
    )
    op.create_table(
        "user_project_preferences",
        sa.Column("user_id", Id(), nullable=False),
        sa.Column("project_id", Id(), nullable=False),
        sa.Column("environment", sa.String(255)),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "project_id"),
    )


def _backfill() -> None:
    """Environments already reported, and releases events reported that sentry-cli did
    not create (one releases model: a release is created when first seen)."""
    op.execute(
        "INSERT INTO project_environments (project_id, name, first_seen, last_seen) "
        "SELECT project_id, environment, MIN(timestamp), MAX(timestamp) FROM events "
        "WHERE environment IS NOT NULL GROUP BY project_id, environment"
    )
    op.execute(
        "INSERT INTO releases (project_id, version, created_at) "
        "SELECT e.project_id, e.release, MIN(e.timestamp) FROM events e "
        "WHERE e.release IS NOT NULL AND NOT EXISTS (SELECT 1 FROM releases r "
        "WHERE r.project_id = e.project_id AND r.version = e.release) "
        "GROUP BY e.project_id, e.release"
    )
    # A resolved error keeps Sentry's plain "resolved now" meaning.
    op.execute("UPDATE errors SET resolution = 'now' WHERE status = 'resolved'")


def downgrade() -> None:
    for table in (
        "user_project_preferences",
        "project_environments",
        "error_redirects",
        "error_activity",
    ):
        op.drop_table(table)
    op.drop_index("ix_error_tags_search", "error_tags")
    op.drop_index("ix_releases_project_created", "releases")
    op.drop_index("ix_errors_ignore_until", "errors")
    op.drop_index("ix_errors_assignee", "errors")
    for name, _ in reversed(ERROR_COLUMNS):
        op.drop_column("errors", name)
    op.drop_column("errors", "assignee_id")
