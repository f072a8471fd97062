"""``ExternalSource``: the ``ErrorSource`` of a project linked to a Sentry server.

Calls Sentry's web API as GitLab does (reference section 10): the issue list with
``query=is:<status> <search>``, GitLab's sort map and Sentry's ``Link`` cursors; issue
details plus the latest event; status changes with ``PUT /api/0/issues/{id}/``. Every
issue read by id must belong to the linked Sentry project, else it is "not found" (as
GitLab's "outside of the configured Sentry project" check). List and details answers are
cached for a few seconds; a status change forgets the project's cached answers.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from tracebox.errors import BadRequest, InvalidParameter, NotFound
from tracebox.search import SearchQuery
from tracebox.sentry_client import SentryError
from tracebox.sentry_client.pagination import MAX_CURSOR_LENGTH
from tracebox.store.projects import ExternalLink
from tracebox.tracking import sentry_mapping as mapping
from tracebox.tracking.external import host_of
from tracebox.tracking.external_backend import ExternalBackend
from tracebox.tracking.external_workflow import ExternalWorkflow
from tracebox.tracking.models import (
    ErrorDetails,
    ErrorSort,
    ErrorSummary,
    Event,
    Page,
    ReleaseHealth,
    UserRef,
)

if TYPE_CHECKING:  # the client and httpx load on the first request
    from tracebox.sentry_client import SentryClient, SentryResponse

SENTRY_SORTS = {ErrorSort.FREQUENCY: "freq", ErrorSort.FIRST_SEEN: "new"}  # last_seen: default


class ExternalSource(ExternalWorkflow):
    def __init__(self, backend: ExternalBackend, project_id: int, link: ExternalLink) -> None:
        self._backend = backend
        self._project_id = project_id
        self._link = link
        self._client: SentryClient | None = None

    def _sentry(self) -> SentryClient:
        if self._client is None:  # the token is decrypted only when a request is made
            token = self._backend.cipher.decrypt(self._link.encrypted_token)
            self._client = self._backend.client(host_of(self._link.api_url), token)
        return self._client

    def _get(self, path: str, params: dict[str, str] | None = None) -> SentryResponse:
        key = (self._project_id, self._link.api_url, path, tuple(sorted((params or {}).items())))
        cached = self._backend.cache.get(key)
        if cached is None:
            cached = self._sentry().get(path, params)
            self._backend.cache.put(key, cached)
        return cached

    def _project_path(self) -> str:
        org = quote(self._link.organization_slug, safe="")
        return f"{org}/{quote(self._link.project_slug, safe='')}"

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
        """The query goes to Sentry in Sentry's spelling (``assigned:me`` is then the
        owner of the linked auth token, as Sentry reads it)."""
        if cursor and (len(cursor) > MAX_CURSOR_LENGTH or not cursor.isprintable()):
            raise InvalidParameter("cursor is invalid")
        params = {"query": query.to_sentry(), "limit": str(per_page)}
        if sort in SENTRY_SORTS:
            params["sort"] = SENTRY_SORTS[sort]
        if cursor:
            params["cursor"] = cursor
        if environment:
            params["environment"] = environment
        answer = self._get(f"projects/{self._project_path()}/issues/", params)
        if not isinstance(answer.body, builtins.list):
            raise SentryError("Sentry API response is invalid: not a list of issues", "shape")
        items = [mapping.summary(i, self._project_id) for i in answer.body]
        return Page(items, answer.links.next_cursor, answer.links.prev_cursor)

    def _issue(self, error_id: int, *, fresh: bool = False) -> dict[str, Any]:
        path = f"issues/{error_id}/"
        try:
            body = self._sentry().get(path).body if fresh else self._get(path).body
        except SentryError as e:
            if e.upstream_status == 404:
                raise NotFound("Error") from e
            raise
        if not isinstance(body, dict):
            raise SentryError("Sentry API response is invalid: not an issue", "shape")
        project = body.get("project") if isinstance(body.get("project"), dict) else {}
        assert isinstance(project, dict)
        if str(project.get("id")) != self._link.external_project_id:
            raise NotFound("Error")  # outside the linked Sentry project
        return body

    def get(self, error_id: int) -> ErrorDetails:
        issue = self._issue(error_id)
        return ErrorDetails(
            error=mapping.summary(issue, self._project_id),
            first_release=mapping.release(issue.get("firstRelease")),
            last_release=mapping.release(issue.get("lastRelease")),
            tags=[],
            daily=[],
            latest_event=self._latest_or_none(error_id),
            user_report_count=mapping.count(issue.get("userReportCount")),
        )

    def _latest_or_none(self, error_id: int) -> Event | None:
        try:
            body = self._get(f"issues/{error_id}/events/latest/").body
        except SentryError as e:
            if e.upstream_status == 404:
                return None
            raise
        return mapping.event(body, error_id, self._project_id)

    def events(
        self, error_id: int, *, cursor: str | None, per_page: int, environment: str | None = None
    ) -> Page[Event]:
        """Sentry's event list is not part of what GitLab reads: the latest event only."""
        latest = self.get(error_id).latest_event
        return Page([latest] if latest and not cursor else [], None, None)

    def latest_event(self, error_id: int) -> Event:
        found = self.get(error_id).latest_event
        if found is None:
            raise NotFound("Event")
        return found

    def event(self, error_id: int, event_id: str) -> Event:
        found = self.latest_event(error_id)
        if found.event_id.replace("-", "") != event_id.replace("-", "").lower():
            raise NotFound("Event")
        return found

    def link_issue(
        self, error_id: int, url: str | None, actor: UserRef | None = None
    ) -> ErrorSummary:
        raise BadRequest(
            "This project's errors live on a Sentry server: link issues there (Sentry's "
            "GitLab integration)"
        )

    def releases(self) -> builtins.list[ReleaseHealth]:
        return []  # Sentry's release health is not part of this integration
