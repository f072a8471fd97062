"""Errors, their events, and release health, through ``tracking.ErrorSource``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response
from pydantic import BaseModel

from tracebox.accounts.projects import ProjectAccess
from tracebox.api.context import ApiContext, Ctx, ErrorsReader, ErrorsUpdater, IdPath
from tracebox.api.error_schemas import ErrorDetailsOut, ErrorOut, EventOut, ReleaseOut
from tracebox.api.pagination import (
    DEFAULT_PER_PAGE,
    CursorParam,
    PagingParams,
    PerPage,
    keyset_headers,
    offset_headers,
)
from tracebox.models import ErrorStatus
from tracebox.tracking import ErrorSource, source_for_project
from tracebox.tracking.models import ErrorSort, StatusFilter

router = APIRouter(tags=["errors"])
ERRORS = "/projects/{id}/error_tracking/errors"
EventId = Annotated[str, Path(pattern=r"^[0-9a-fA-F-]{32,36}$", description="32 hex digits")]
Search = Annotated[
    str | None, Query(max_length=255, pattern=r"^[^\x00]*$", description="Title or culprit text")
]


class StatusIn(BaseModel):
    status: ErrorStatus


def _source(ctx: ApiContext, access: ProjectAccess) -> ErrorSource:
    return source_for_project(ctx.db, access.project.id, ctx.external)


@router.get(ERRORS, response_model=list[ErrorOut])
def list_errors(
    request: Request,
    response: Response,
    access: ErrorsReader,
    ctx: Ctx,
    status: StatusFilter = StatusFilter.UNRESOLVED,
    search: Search = None,
    sort: ErrorSort = ErrorSort.LAST_SEEN,
    cursor: CursorParam = None,
    per_page: PerPage = DEFAULT_PER_PAGE,
) -> list[ErrorOut]:
    """Errors, newest first by ``sort``, with 24 hourly counts each. Paginated by keyset:
    follow the ``Link`` header's ``rel="next"`` (its ``cursor``)."""
    page = _source(ctx, access).list(
        status=status, search=search, sort=sort, cursor=cursor, per_page=per_page
    )
    keyset_headers(request, response, per_page, page.next_cursor, page.prev_cursor)
    return [ErrorOut.of(e) for e in page.items]


@router.get(ERRORS + "/{error_id}", response_model=ErrorDetailsOut)
def get_error(error_id: IdPath, access: ErrorsReader, ctx: Ctx) -> ErrorDetailsOut:
    """One error with its latest event's stack trace, first and last release, top tags
    and 30 daily counts."""
    return ErrorDetailsOut.of_details(_source(ctx, access).get(error_id))


@router.put(ERRORS + "/{error_id}", response_model=ErrorOut)
def update_error(error_id: IdPath, body: StatusIn, access: ErrorsUpdater, ctx: Ctx) -> ErrorOut:
    """Resolve, ignore or reopen an error (Developer+)."""
    return ErrorOut.of(_source(ctx, access).update_status(error_id, body.status))


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
