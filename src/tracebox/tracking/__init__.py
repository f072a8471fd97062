"""Errors as the UI and the REST API see them, whatever backend holds them.

``source_for_project`` picks the backend of a project: the integrated store, or a linked
external Sentry server (``ExternalSource``).

The backends are imported on first use of their names: the background process imports
this package for ``notices`` (the digest's alert hooks) and should not load the external
backend's HTTP client and cryptography (~17 MB) for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracebox import lazy
from tracebox.errors import BadRequest
from tracebox.store import Database, projects

if TYPE_CHECKING:
    from tracebox.tracking.external_backend import ExternalBackend
    from tracebox.tracking.external_source import ExternalSource
    from tracebox.tracking.integrated import IntegratedSource
    from tracebox.tracking.source import ErrorSource

__getattr__ = lazy.exports(
    __name__,
    {
        "ErrorSource": "source",
        "ExternalBackend": "external_backend",
        "ExternalSource": "external_source",
        "IntegratedSource": "integrated",
    },
)

__all__ = [
    "ErrorSource",
    "ExternalBackend",
    "ExternalSource",
    "IntegratedSource",
    "source_for_project",
]
NOT_LINKED = "Error Tracking is set to an external Sentry server, but no Sentry project is linked"


def source_for_project(db: Database, project_id: int, external: ExternalBackend) -> ErrorSource:
    """The one place that reads a project's settings and picks its backend: the
    integrated store, unless the project is linked to an external Sentry server. A
    project without settings reads the store too (it simply holds nothing yet)."""
    from tracebox.tracking.external_source import ExternalSource
    from tracebox.tracking.integrated import IntegratedSource

    with db.read() as conn:
        settings = projects.get_settings(conn, project_id)
        if settings is None or not settings.active or settings.integrated:
            return IntegratedSource(db, project_id)
        link = projects.get_external_link(conn, project_id)
    if link is None:
        raise BadRequest(NOT_LINKED)
    return ExternalSource(external, project_id, link)
