"""Writing the SDK data of a batch (``digest.sdkdata`` prepares it) in the digest's
transaction, within the bounds of ``SdkLimits`` (docs/sdk-data.md)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from tracebox.config import Settings
from tracebox.digest.sdkdata import SdkBatch
from tracebox.store import attachments, client_reports, feedback, logs

LOG_TRIM_RECORDS = 5000  # records a project's logs may lose per batch (bounded work)


def _default(name: str) -> Any:
    return getattr(Settings, name)


@dataclass(frozen=True)
class SdkLimits:
    """The bounds the digest applies (``Settings``, docs/sdk-data.md)."""

    attachments_max_project_bytes: int = _default("attachments_max_project_bytes")
    log_retention_days: float = _default("log_retention_days")
    logs_max_project_bytes: int = _default("logs_max_project_bytes")

    @classmethod
    def from_settings(cls, s: Settings) -> SdkLimits:
        return cls(
            attachments_max_project_bytes=s.attachments_max_project_bytes,
            log_retention_days=s.log_retention_days,
            logs_max_project_bytes=s.logs_max_project_bytes,
        )


def write(
    conn: Connection, batch: SdkBatch, limits: SdkLimits, *, now: float | None = None
) -> dict[tuple[int, str], int]:
    """Write the batch's SDK data inside the digest's transaction; return what was
    dropped per (project, reason) (attachments past the project's cap)."""
    dropped = attachments.write(
        conn, batch.attachments, max_project_bytes=limits.attachments_max_project_bytes
    )
    feedback.write(conn, batch.feedback)
    client_reports.add(conn, batch.discarded)
    logs.write(conn, batch.logs)
    before = (now or time.time()) - limits.log_retention_days * 86400
    for project_id in sorted({log.project_id for log in batch.logs}):
        logs.trim(
            conn,
            project_id,
            before=before,
            max_bytes=limits.logs_max_project_bytes,
            limit=LOG_TRIM_RECORDS,
        )
    return dropped
