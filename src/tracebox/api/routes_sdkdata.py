"""What SDKs send besides errors, on /api/v4 (issue 12; docs/sdk-data.md): an event's
attachments and their download, user feedback, the log search, and what the SDKs
reported they discarded (client reports). Reporter+, as errors.
A project linked to a Sentry server keeps these in Sentry: its lists are empty."""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from tracebox.api.context import Ctx, ErrorsReader, IdPath
from tracebox.api.pagination import DEFAULT_PER_PAGE, CursorParam, PerPage, keyset_headers
from tracebox.api.routes_errors import ERRORS, EventId
from tracebox.api.timefmt import iso
from tracebox.errors import InvalidParameter
from tracebox.protocol.logs import LEVELS
from tracebox.store import attachments, client_reports
from tracebox.store import feedback as feedback_store
from tracebox.store import logs as log_store
from tracebox.store.attachments import Attachment
from tracebox.store.feedback import FeedbackRow
from tracebox.store.logs import LogRow
from tracebox.tracking import attachments as downloads
from tracebox.tracking import cursor as cursors
from tracebox.tracking import source_for_project

router = APIRouter(tags=["sdk data"])
PROJECT = "/projects/{id}/error_tracking"
Timestamp = Annotated[
    float | None, Query(ge=0, le=1e11, description="Unix seconds (a log search's bound)")
]


class AttachmentOut(BaseModel):
    id: int
    event_id: str
    name: str
    content_type: str = Field(description="As the SDK declared it; downloads are always "
                              "application/octet-stream")  # fmt: skip
    attachment_type: str = Field(description="event.attachment, event.minidump, ...")
    size: int  # bytes
    created_at: str
    download_url: str

    @classmethod
    def of(cls, a: Attachment, project_id: int) -> AttachmentOut:
        return cls(
            id=a.id,
            event_id=a.event_id,
            name=a.name,
            content_type=a.content_type,
            attachment_type=a.attachment_type,
            size=a.size,
            created_at=iso(a.created_at),
            download_url=f"/api/v4/projects/{project_id}/error_tracking/attachments/{a.id}",
        )


class FeedbackOut(BaseModel):
    id: int
    event_id: str | None = Field(description="The event the user answered, if any")
    error_id: int | None = Field(description="That event's error, while the event is stored")
    name: str
    email: str
    comments: str
    url: str | None
    source: str = Field(description="widget, api, ... ; user_report for older SDKs' items")
    release: str | None
    environment: str | None
    created_at: str

    @classmethod
    def of(cls, f: FeedbackRow) -> FeedbackOut:
        fields = {k: getattr(f, k) for k in cls.model_fields if k != "created_at"}
        return cls(**fields, created_at=iso(f.created_at))


class LogOut(BaseModel):
    id: int
    timestamp: str
    level: str = Field(description="trace, debug, info, warn, error or fatal")
    severity_number: int | None
    body: str
    trace_id: str | None
    span_id: str | None
    release: str | None
    environment: str | None
    logger: str | None
    attributes: dict[str, Any]

    @classmethod
    def of(cls, r: LogRow) -> LogOut:
        fields = {k: getattr(r, k) for k in cls.model_fields if k != "timestamp"}
        return cls(**fields, timestamp=iso(r.timestamp))


def _after(cursor: str | None) -> tuple[float, int] | None:
    found = cursors.decode(cursor)
    if found is not None and found.is_prev:
        raise InvalidParameter("cursor is invalid")
    return (found.value, found.id) if found else None


def _next(rows: list[Any], per_page: int, edge: str) -> str | None:
    if len(rows) <= per_page:
        return None
    last = rows[per_page - 1]
    return cursors.Cursor(float(getattr(last, edge)), last.id, False).encode()


@router.get(
    ERRORS + "/{error_id}/events/{event_id}/attachments", response_model=list[AttachmentOut]
)
def list_attachments(
    error_id: IdPath, event_id: EventId, access: ErrorsReader, ctx: Ctx
) -> list[AttachmentOut]:
    """The files sent with one event of the error."""
    event = source_for_project(ctx.db, access.project.id, ctx.external).event(error_id, event_id)
    with ctx.db.read() as conn:
        found = attachments.for_event(conn, access.project.id, event.event_id)
    return [AttachmentOut.of(a, access.project.id) for a in found]


@router.get(
    PROJECT + "/attachments/{attachment_id}",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/octet-stream": {}}}},
)
def download_attachment(attachment_id: IdPath, access: ErrorsReader, ctx: Ctx) -> Response:
    """The file, always as a download: ``application/octet-stream``,
    ``Content-Disposition: attachment``, ``X-Content-Type-Options: nosniff``."""
    found = downloads.find(ctx.db, access.project.id, attachment_id)
    return StreamingResponse(
        downloads.stream(ctx.db, found), headers=downloads.download_headers(found)
    )


@router.get(PROJECT + "/user_feedback", response_model=list[FeedbackOut])
def list_feedback(
    request: Request,
    response: Response,
    access: ErrorsReader,
    ctx: Ctx,
    cursor: CursorParam = None,
    per_page: PerPage = DEFAULT_PER_PAGE,
) -> list[FeedbackOut]:
    """The project's user feedback, newest first; keyset pages (``Link: rel="next"``)."""
    with ctx.db.read() as conn:
        rows = feedback_store.list_page(
            conn, access.project.id, after=_after(cursor), limit=per_page + 1
        )
    keyset_headers(request, response, per_page, _next(rows, per_page, "created_at"), None)
    return [FeedbackOut.of(f) for f in rows[:per_page]]


@router.get(ERRORS + "/{error_id}/user_feedback", response_model=list[FeedbackOut])
def error_feedback(error_id: IdPath, access: ErrorsReader, ctx: Ctx) -> list[FeedbackOut]:
    """The newest 100 user reports about the error's events."""
    source_for_project(ctx.db, access.project.id, ctx.external).get(error_id)  # 404 if none
    with ctx.db.read() as conn:
        found = feedback_store.for_error(conn, access.project.id, error_id, limit=100)
    return [FeedbackOut.of(f) for f in found]


@router.get(PROJECT + "/logs", response_model=list[LogOut])
def search_logs(
    request: Request,
    response: Response,
    access: ErrorsReader,
    ctx: Ctx,
    level: Annotated[list[str] | None, Query(description="Levels to keep (repeat)")] = None,
    search: Annotated[str | None, Query(max_length=255, pattern=r"^[^\x00]*$")] = None,
    trace_id: Annotated[str | None, Query(pattern=r"^[0-9a-f]{32}$")] = None,
    since: Timestamp = None,
    until: Timestamp = None,
    cursor: CursorParam = None,
    per_page: PerPage = DEFAULT_PER_PAGE,
) -> list[LogOut]:
    """Log records, newest first: of the given levels, whose message or logger holds
    ``search`` (any case), of one trace, at or after ``since`` and before ``until``."""
    levels = level or []
    if any(name not in LEVELS for name in levels):
        raise InvalidParameter(f"level must be one of {', '.join(LEVELS)}")
    with ctx.db.read() as conn:
        rows = log_store.search(
            conn, access.project.id, levels=levels, text=search or None, trace_id=trace_id,
            since=since, until=until, after=_after(cursor), limit=per_page + 1,
        )  # fmt: skip
    keyset_headers(request, response, per_page, _next(rows, per_page, "timestamp"), None)
    return [LogOut.of(r) for r in rows[:per_page]]


class DiscardedOut(BaseModel):
    category: str = Field(description="error, transaction, session, attachment, log_item, ...")
    reason: str = Field(description="ratelimit_backoff, queue_overflow, before_send, ...")
    count: int


MAX_REPORT_DAYS = 90  # client report counters are hourly; a quarter is the longest view


@router.get(PROJECT + "/client_reports", response_model=list[DiscardedOut])
def discarded_by_sdks(
    access: ErrorsReader,
    ctx: Ctx,
    days: Annotated[int, Query(ge=1, le=MAX_REPORT_DAYS, description="The last N days")] = 30,
) -> list[DiscardedOut]:
    """What the project's SDKs reported they discarded (``client_report`` items) in the
    last ``days`` days, per data category and reason, most first: why an error the app
    raised may never have reached Tracebox."""
    since_hour = int(time.time() // 3600) - days * 24 + 1
    with ctx.db.read() as conn:
        found = client_reports.totals(conn, access.project.id, since_hour=since_hour)
    return [DiscardedOut(category=d.category, reason=d.reason, count=d.count) for d in found]
