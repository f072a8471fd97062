"""Errors, their events, and release health, through ``tracking.ErrorSource``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response

from tracebox.accounts.projects import ProjectAccess
from tracebox.api.context import (
    ApiContext,
    Ctx,
    CurrentPrincipal,
    ErrorsReader,
    ErrorsUpdater,
    IdPath,
)
from tracebox.api.error_schemas import ErrorDetailsOut, ErrorOut, EventOut, ReleaseOut
from tracebox.api.pagination import (
    DEFAULT_PER_PAGE,
    CursorParam,
    PagingParams,
    PerPage,
    keyset_headers,
    offset_headers,
)
from tracebox.api.workflow_schemas import ErrorUpdateIn
from tracebox.errors import InvalidParameter
from tracebox.tracking import ErrorSource, source_for_project
from tracebox.tracking.assignees import actor
from tracebox.tracking.assignees import find as find_assignee
from tracebox.tracking.issue_links import checked_url
from tracebox.tracking.models import KEEP, ErrorChange, ErrorSort, Keep, StatusFilter, UserRef
from tracebox.tracking.queries import list_query

router = APIRouter(tags=["errors"])
ERRORS = "/projects/{id}/error_tracking/errors"
EventId = Annotated[str, Path(pattern=r"^[0-9a-fA-F-]{32,36}$", description="32 hex digits")]
Search = Annotated[
    str | None, Query(max_length=255, pattern=r"^[^\x00]*$", description="Title or culprit text")
]
QueryText = Annotated[
    str | None, Query(max_length=4096, description="Search query (docs/search.md)")
]
Environment = Annotated[
    str | None, Query(max_length=255, pattern=r"^[^\x00]*$", description="Only errors seen there")
]


def _source(ctx: ApiContext, access: ProjectAccess) -> ErrorSource:
    return source_for_project(ctx.db, access.project.id, ctx.external)


@router.get(ERRORS, response_model=list[ErrorOut])
def list_errors(
    request: Request,
    response: Response,
    access: ErrorsReader,
    ctx: Ctx,
    principal: CurrentPrincipal,
    query: QueryText = None,
    environment: Environment = None,
    status: StatusFilter | None = None,
    search: Search = None,
    sort: ErrorSort = ErrorSort.LAST_SEEN,
    cursor: CursorParam = None,
    per_page: PerPage = DEFAULT_PER_PAGE,
) -> list[ErrorOut]:
    """Errors matching ``query`` (docs/search.md; without it ``status``, default
    unresolved, and ``search``), newest first by ``sort``, with 24 hourly counts each.
    Paginated by keyset: follow the ``Link`` header's ``rel="next"`` (its ``cursor``)."""
    wanted = list_query(ctx.settings, query=query, status=status, search=search)
    page = _source(ctx, access).list(
        query=wanted,
        sort=sort,
        cursor=cursor,
        per_page=per_page,
        environment=environment,
        viewer=principal.user.id,
    )
    keyset_headers(request, response, per_page, page.next_cursor, page.prev_cursor)
    return [ErrorOut.of(e) for e in page.items]


@router.get(ERRORS + "/{error_id}", response_model=ErrorDetailsOut)
def get_error(error_id: IdPath, access: ErrorsReader, ctx: Ctx) -> ErrorDetailsOut:
    """One error with its latest event's stack trace, first and last release, top tags,
    events per environment and 30 daily counts."""
    return ErrorDetailsOut.of_details(_source(ctx, access).get(error_id))


@router.put(ERRORS + "/{error_id}", response_model=ErrorOut)
def update_error(
    error_id: IdPath,
    body: ErrorUpdateIn,
    access: ErrorsUpdater,
    ctx: Ctx,
    principal: CurrentPrincipal,
) -> ErrorOut:
    """Resolve (now, ``in_release`` or ``in_next_release``), ignore (forever,
    ``ignore_duration`` minutes, until ``ignore_until``, ``ignore_count`` more events or
    ``ignore_user_count`` more users) or reopen an error; assign it (``assignee_id``, null
    unassigns); mark it ``reviewed``; link it to an issue (``external_issue_url``, null
    unlinks). Developer+; recorded in the error's activity."""
    change = error_change(ctx, access, body)
    if change.is_empty() and not body.wants_link():
        raise InvalidParameter("status, assignee_id, reviewed or external_issue_url is missing")
    source, who = _source(ctx, access), actor(principal.user)
    url = checked_url(body.external_issue_url)  # before anything changes
    updated = None if change.is_empty() else source.update(error_id, change, who)
    if body.wants_link():
        updated = source.link_issue(error_id, url, who)
    assert updated is not None
    return ErrorOut.of(updated)


def error_change(ctx: ApiContext, access: ProjectAccess, body: ErrorUpdateIn) -> ErrorChange:
    assignee: UserRef | Keep | None = KEEP if not body.wants_assignee() else None
    if body.assignee_id is not None:
        assignee = find_assignee(ctx.db, access.project.id, user_id=body.assignee_id)
    return ErrorChange(status=body.status_change(), assignee=assignee, reviewed=body.reviewed)


@router.get(ERRORS + "/{error_id}/events", response_model=list[EventOut])
def list_events(
    request: Request,
    response: Response,
    error_id: IdPath,
    access: ErrorsReader,
    ctx: Ctx,
    cursor: CursorParam = None,
    per_page: PerPage = DEFAULT_PER_PAGE,
) -> list[EventOut]:
    """The error's events, newest first, paginated by keyset like the error list."""
    page = _source(ctx, access).events(error_id, cursor=cursor, per_page=per_page)
    keyset_headers(request, response, per_page, page.next_cursor, page.prev_cursor)
    return [EventOut.of(e) for e in page.items]


@router.get(ERRORS + "/{error_id}/events/latest", response_model=EventOut)
def latest_event(error_id: IdPath, access: ErrorsReader, ctx: Ctx) -> EventOut:
    return EventOut.of(_source(ctx, access).latest_event(error_id))


@router.get(ERRORS + "/{error_id}/events/{event_id}", response_model=EventOut)
def get_event(error_id: IdPath, event_id: EventId, access: ErrorsReader, ctx: Ctx) -> EventOut:
    return EventOut.of(_source(ctx, access).event(error_id, event_id))


@router.get("/projects/{id}/error_tracking/releases", response_model=list[ReleaseOut])
def list_releases(
    request: Request, response: Response, access: ErrorsReader, ctx: Ctx, paging: PagingParams
) -> list[ReleaseOut]:
    """Release health per release and environment, the most recent first: sessions,
    crashed, errored, and crash-free sessions and users in percent (null without any)."""
    found = _source(ctx, access).releases()
    offset_headers(request, response, paging, len(found))
    return [ReleaseOut.of(r) for r in found[paging.offset : paging.offset + paging.per_page]]
