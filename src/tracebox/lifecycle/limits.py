"""Saving a project's quotas and spike protection (audited), and whether spike
protection is limiting it now (the banner)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict

from tracebox.errors import BadRequest
from tracebox.models import Project
from tracebox.store import Database, audit, quotas, usage
from tracebox.store.audit import Author
from tracebox.store.quotas import ProjectLimits, Quota, SpikeProtection


def save(
    db: Database,
    project: Project,
    author: Author,
    limits: Sequence[Quota],
    spike: SpikeProtection,
) -> ProjectLimits:
    """Replace the project's quotas and spike protection; ingestion applies them within
    ``TRACEBOX_KEY_CACHE_SECONDS``."""
    with db.write() as conn:
        try:
            saved = quotas.put(conn, project.id, limits, spike)
        except ValueError as e:
            raise BadRequest(str(e)) from e
        audit.record(
            conn,
            author,
            project_id=project.id,
            project_path=project.path,
            action="quotas.update",
            target="quotas and spike protection",
            details={"quotas": [asdict(q) for q in limits], "spike_protection": asdict(spike)},
        )
    return saved


def spike_refusals(db: Database, project_id: int, now: float | None = None) -> int:
    """Events spike protection refused in this hour and the previous one."""
    hour = int((now or time.time()) // 3600)
    with db.read() as conn:
        return usage.refused_since(conn, project_id, hour - 1, "spike_protection")
