"""GitLab issue links: the linked issue's URL on an error, the GitLab project to link to

Revision ID: 0004_boundaries
Revises: 0003_pipeline
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_boundaries"
down_revision = "0003_pipeline"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # batch mode: SQLite rebuilds the table, PostgreSQL alters it in place
    with op.batch_alter_table("errors") as batch:
        batch.add_column(sa.Column("external_issue_url", sa.Text(), nullable=True))
    with op.batch_alter_table("error_tracking_settings") as batch:
        batch.add_column(sa.Column("gitlab_project_url", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("error_tracking_settings") as batch:
        batch.drop_column("gitlab_project_url")
    with op.batch_alter_table("errors") as batch:
        batch.drop_column("external_issue_url")
