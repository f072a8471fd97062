"""releases, deploys and source map artifacts (sentry-cli)

Revision ID: 0006_sourcemaps
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_sourcemaps"
down_revision = "0001"
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "artifact_blobs",
        sa.Column("checksum", sa.String(length=40), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("checksum"),
    )
    op.create_table(
        "artifact_chunks",
        sa.Column("checksum", sa.String(length=40), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("checksum"),
    )
    op.create_index("ix_artifact_chunks_created", "artifact_chunks", ["created_at"])
    op.create_table(
        "artifact_bundles",
        sa.Column("id", Id, autoincrement=True, nullable=False),
        sa.Column("project_id", Id, nullable=False),
        sa.Column("checksum", sa.String(length=40), nullable=False),
        sa.Column("bundle_id", sa.String(length=36), nullable=False),
        sa.Column("release", sa.String(length=255), nullable=False),
        sa.Column("dist", sa.String(length=64), nullable=False),
        sa.Column("file_count", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "project_id", "checksum", "release", "dist", name="uq_artifact_bundles_checksum"
        ),
    )
    op.create_table(
        "releases",
        sa.Column("id", Id, autoincrement=True, nullable=False),
        sa.Column("project_id", Id, nullable=False),
        sa.Column("version", sa.String(length=255), nullable=False),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("date_started", sa.Float(), nullable=True),
        sa.Column("date_released", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("project_id", "version", name="uq_releases_project_version"),
    )
    op.create_table(
        "artifact_files",
        sa.Column("id", Id, autoincrement=True, nullable=False),
        sa.Column("project_id", Id, nullable=False),
        sa.Column("bundle_id", Id, nullable=True),
        sa.Column("release", sa.String(length=255), nullable=False),
        sa.Column("dist", sa.String(length=64), nullable=False),
        sa.Column("url", sa.String(length=1000), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("debug_id", sa.String(length=36), nullable=True),
        sa.Column("sourcemap", sa.String(length=1000), nullable=True),
        sa.Column("checksum", sa.String(length=40), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["bundle_id"], ["artifact_bundles.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["checksum"], ["artifact_blobs.checksum"]),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_artifact_files_checksum", "artifact_files", ["checksum"])
    op.create_index("ix_artifact_files_debug_id", "artifact_files", ["project_id", "debug_id"])
    op.create_index(
        "ix_artifact_files_release_url", "artifact_files", ["project_id", "release", "dist", "url"]
    )
    op.create_table(
        "deploys",
        sa.Column("id", Id, autoincrement=True, nullable=False),
        sa.Column("release_id", Id, nullable=False),
        sa.Column("environment", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("date_started", sa.Float(), nullable=True),
        sa.Column("date_finished", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["release_id"], ["releases.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_deploys_release", "deploys", ["release_id", "date_finished"])


def downgrade() -> None:
    op.drop_table("deploys")
    op.drop_table("artifact_files")
    op.drop_table("releases")
    op.drop_table("artifact_bundles")
    op.drop_table("artifact_chunks")
    op.drop_table("artifact_blobs")
