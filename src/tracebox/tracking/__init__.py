"""Errors as the UI and the REST API see them, whatever backend holds them.

``source_for`` picks the backend of a project: the integrated store, or (a later issue) a
linked external Sentry server.
"""

from __future__ import annotations

from tracebox.errors import BadRequest
from tracebox.models import ErrorTrackingSettings
from tracebox.store import Database
from tracebox.tracking.integrated import IntegratedSource
from tracebox.tracking.source import MAX_PER_PAGE, ErrorSource

__all__ = ["MAX_PER_PAGE", "ErrorSource", "IntegratedSource", "source_for"]


def source_for(
    db: Database, project_id: int, settings: ErrorTrackingSettings | None
) -> ErrorSource:
    """The integrated store unless the project is linked to an external Sentry server.
    A project without settings reads the store too (it simply holds nothing yet)."""
    if settings is not None and settings.active and not settings.integrated:
        raise BadRequest("the external Sentry backend is not available in this version")
    return IntegratedSource(db, project_id)
