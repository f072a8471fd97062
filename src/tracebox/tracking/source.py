"""``ErrorSource``: the one interface the REST API and the UI use to read and change errors.

``IntegratedSource`` reads this instance's store; ``ExternalSource`` (a project linked to
a Sentry server) implements the same methods over Sentry's web API, so the UI and
the API are the same for both backends by construction (spec 1.3).

Every method raises ``tracebox.errors.NotFound`` for an error or event that does not
exist in this source, and ``BadRequest`` for a malformed cursor or query. A backend that
cannot do something (comments on a linked Sentry server) raises ``BadRequest`` saying so.
"""

from __future__ import annotations

import builtins
from typing import Protocol

from tracebox.search import SearchQuery
from tracebox.tracking.models import (
    Activity,
    BulkResult,
    ErrorChange,
    ErrorDetails,
    ErrorSort,
    ErrorSummary,
    Event,
    Page,
    ReleaseHealth,
    UserRef,
)


class ErrorSource(Protocol):
    def list(
        self,
        *,
        query: SearchQuery,
        sort: ErrorSort,
        cursor: str | None,
        per_page: int,
        environment: str | None = None,
        viewer: int | None = None,
    ) -> Page[ErrorSummary]:
        """Errors matching ``query`` (``tracebox.search``), newest first by ``sort``;
        ``environment`` narrows to errors seen there; ``viewer`` is who ``me`` is."""
        ...

    def get(self, error_id: int) -> ErrorDetails: ...

    def events(
        self, error_id: int, *, cursor: str | None, per_page: int, environment: str | None = None
    ) -> Page[Event]:
        """The error's events, newest first (of one environment if given)."""
        ...

    def latest_event(self, error_id: int) -> Event: ...

    def event(self, error_id: int, event_id: str) -> Event: ...

    def update(self, error_id: int, change: ErrorChange, actor: UserRef | None) -> ErrorSummary:
        """Change status (with its conditions), assignee or review state; recorded as
        activity by ``actor``."""
        ...

    def bulk_update(
        self,
        *,
        ids: builtins.list[int] | None,
        query: SearchQuery | None,
        change: ErrorChange,
        actor: UserRef | None,
        viewer: int | None,
        max_errors: int,
        batch_size: int,
    ) -> BulkResult:
        """The same change to the errors ``ids`` or to all matching ``query``, in batches."""
        ...

    def activity(self, error_id: int) -> builtins.list[Activity]:
        """The error's history, oldest first (comments are ``ActivityKind.NOTE``)."""
        ...

    def add_comment(self, error_id: int, actor: UserRef, text: str) -> Activity: ...

    def edit_comment(
        self, error_id: int, comment_id: int, actor: UserRef, text: str
    ) -> Activity: ...

    def delete_comment(self, error_id: int, comment_id: int) -> None: ...

    def merge(
        self,
        error_ids: builtins.list[int],
        actor: UserRef | None,
        *,
        max_errors: int,
        batch_size: int,
    ) -> int:
        """Merge errors into one (the one with the most events); its id."""
        ...

    def unmerge(self, error_id: int, fingerprint: str, actor: UserRef | None) -> int:
        """Split a fingerprint (grouping hash) off the error into a new error; its id."""
        ...

    def environments(self) -> builtins.list[str]: ...

    def release_names(self) -> builtins.list[str]:
        """Known releases, the most recent first (for "resolve in release")."""
        ...

    def link_issue(
        self, error_id: int, url: str | None, actor: UserRef | None = None
    ) -> ErrorSummary:
        """Link the error to an issue tracker's issue (``url``; None unlinks)."""
        ...

    def releases(self) -> builtins.list[ReleaseHealth]:
        """Release health per release and environment, most recent release first."""
        ...
