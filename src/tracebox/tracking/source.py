"""``ErrorSource``: the one interface the REST API and the UI use to read and change errors.

``IntegratedSource`` reads this instance's store; ``ExternalSource`` (a project linked to
a Sentry server) implements the same methods over Sentry's web API, so the UI and
the API are the same for both backends by construction (spec 1.3).

Every method raises ``tracebox.errors.NotFound`` for an error or event that does not
exist in this source, and ``BadRequest`` for a malformed cursor.
"""

from __future__ import annotations

import builtins
from typing import Protocol

from tracebox.models import ErrorStatus
from tracebox.tracking.models import (
    ErrorDetails,
    ErrorSort,
    ErrorSummary,
    Event,
    Page,
    ReleaseHealth,
    StatusFilter,
)

MAX_PER_PAGE = 100  # as GitLab's error list and Sentry's issue list


class ErrorSource(Protocol):
    def list(
        self,
        *,
        status: StatusFilter,
        search: str | None,
        sort: ErrorSort,
        cursor: str | None,
        per_page: int,
    ) -> Page[ErrorSummary]:
        """Errors, newest first by ``sort``; ``search`` matches title and culprit."""
        ...

    def get(self, error_id: int) -> ErrorDetails: ...

    def events(self, error_id: int, *, cursor: str | None, per_page: int) -> Page[Event]:
        """The error's events, newest first."""
        ...

    def latest_event(self, error_id: int) -> Event: ...

    def event(self, error_id: int, event_id: str) -> Event: ...

    def update_status(self, error_id: int, status: ErrorStatus) -> ErrorSummary: ...

    def link_issue(self, error_id: int, url: str | None) -> ErrorSummary:
        """Link the error to an issue tracker's issue (``url``; None unlinks)."""
        ...

    def releases(self) -> builtins.list[ReleaseHealth]:
        """Release health per release and environment, most recent release first."""
        ...
