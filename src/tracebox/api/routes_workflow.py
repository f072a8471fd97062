"""Triage on /api/v4: bulk changes, activity and comments, environments, and the errors
assigned to the caller across projects."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from tracebox.api.context import (
    ApiContext,
    Commenter,
    CommentsAdmin,
    Ctx,
    CurrentPrincipal,
    ErrorsReader,
    ErrorsUpdater,
    IdPath,
)
from tracebox.api.error_schemas import ErrorOut
from tracebox.api.pagination import DEFAULT_PER_PAGE, CursorParam, PerPage, keyset_headers
from tracebox.api.routes_errors import ERRORS, _source, error_change
from tracebox.api.workflow_schemas import (
    ActivityOut,
    AssignedErrorOut,
    BulkIn,
    BulkOut,
    CommentIn,
    MergeIn,
    UnmergeIn,
)
from tracebox.errors import InvalidParameter
from tracebox.search import Filter
from tracebox.tracking.assigned import assigned_to
from tracebox.tracking.assignees import actor
from tracebox.tracking.models import StatusFilter
from tracebox.tracking.queries import parse_query

router = APIRouter(tags=["triage"])
COMMENTS = ERRORS + "/{error_id}/comments"


def _comment_body(ctx: ApiContext, body: CommentIn) -> str:
    text = body.body.strip()
    if not text:
        raise InvalidParameter("body is empty")
    if len(text) > ctx.settings.comment_max_chars:
        raise InvalidParameter(f"body is too long (at most {ctx.settings.comment_max_chars})")
    return text


@router.put(ERRORS, response_model=BulkOut)
def bulk_update(
    body: BulkIn, access: ErrorsUpdater, ctx: Ctx, principal: CurrentPrincipal
) -> BulkOut:
    """The same change as ``PUT .../errors/{error_id}`` to the errors ``ids``, or to
    every error matching ``query`` (and ``environment``), in batches of
    ``TRACEBOX_BULK_BATCH_ERRORS`` per transaction; at most ``TRACEBOX_BULK_MAX_ERRORS``
    (400 beyond). Developer+."""
    if (body.ids is None) == (body.query is None):
        raise InvalidParameter("ids or query is missing (give one of them)")
    change = error_change(ctx, access, body)
    if change.is_empty():
        raise InvalidParameter("status, assignee_id or reviewed is missing")
    query = None
    if body.query is not None:
        query = parse_query(ctx.settings, body.query)
        if body.environment:
            query = query.plus(Filter("environment", body.environment))
    result = _source(ctx, access).bulk_update(
        ids=body.ids,
        query=query,
        change=change,
        actor=actor(principal.user),
        viewer=principal.user.id,
        max_errors=ctx.settings.bulk_max_errors,
        batch_size=ctx.settings.bulk_batch_errors,
    )
    return BulkOut(changed=result.changed, batches=result.batches)


@router.post(ERRORS + "/merge", response_model=ErrorOut)
def merge_errors(
    body: MergeIn, access: ErrorsUpdater, ctx: Ctx, principal: CurrentPrincipal
) -> ErrorOut:
    """Merge errors into the one with the most events (returned): their events, counts
    and history move to it, and future events of any of their fingerprints go to it.
    The merged errors' ids keep answering, with the error they became. Developer+."""
    source = _source(ctx, access)
    merged = source.merge(
        body.ids,
        actor(principal.user),
        max_errors=ctx.settings.bulk_max_errors,
        batch_size=ctx.settings.bulk_batch_errors,
    )
    return ErrorOut.of(source.get(merged).error)


@router.post(ERRORS + "/{error_id}/unmerge", response_model=ErrorOut, status_code=201)
def unmerge_error(
    error_id: IdPath, body: UnmergeIn, access: ErrorsUpdater, ctx: Ctx, principal: CurrentPrincipal
) -> ErrorOut:
    """Split one fingerprint (a ``grouping_hashes`` entry other than the error's own) off
    into a new error (returned), with the events that have it. Developer+."""
    source = _source(ctx, access)
    new_id = source.unmerge(error_id, body.grouping_hash, actor(principal.user))
    return ErrorOut.of(source.get(new_id).error)


@router.get(ERRORS + "/{error_id}/activity", response_model=list[ActivityOut])
def list_activity(error_id: IdPath, access: ErrorsReader, ctx: Ctx) -> list[ActivityOut]:
    """Who did what and when, oldest first: status changes (with their release or
    ignore condition), assignments, regressions, merges and comments (``type`` note)."""
    return [ActivityOut.of(a) for a in _source(ctx, access).activity(error_id)]


@router.post(COMMENTS, response_model=ActivityOut, status_code=201)
def add_comment(
    error_id: IdPath, body: CommentIn, access: Commenter, ctx: Ctx, principal: CurrentPrincipal
) -> ActivityOut:
    """A Markdown comment (Reporter+), shown rendered and sanitised on the details page."""
    text = _comment_body(ctx, body)
    return ActivityOut.of(_source(ctx, access).add_comment(error_id, actor(principal.user), text))


@router.put(COMMENTS + "/{comment_id}", response_model=ActivityOut)
def edit_comment(
    error_id: IdPath,
    comment_id: IdPath,
    body: CommentIn,
    access: Commenter,
    ctx: Ctx,
    principal: CurrentPrincipal,
) -> ActivityOut:
    """Only the comment's author edits it (403 for anyone else)."""
    text = _comment_body(ctx, body)
    source = _source(ctx, access)
    return ActivityOut.of(source.edit_comment(error_id, comment_id, actor(principal.user), text))


@router.delete(COMMENTS + "/{comment_id}", status_code=204)
def delete_comment(
    error_id: IdPath, comment_id: IdPath, access: CommentsAdmin, ctx: Ctx
) -> Response:
    """Maintainer+ delete any comment."""
    _source(ctx, access).delete_comment(error_id, comment_id)
    return Response(status_code=204)


@router.get("/projects/{id}/error_tracking/environments", response_model=list[str])
def list_environments(access: ErrorsReader, ctx: Ctx) -> list[str]:
    """The environments the project's events reported, by name."""
    return _source(ctx, access).environments()


@router.get("/error_tracking/assigned_errors", response_model=list[AssignedErrorOut])
def my_errors(
    request: Request,
    response: Response,
    ctx: Ctx,
    principal: CurrentPrincipal,
    status: StatusFilter = StatusFilter.UNRESOLVED,
    cursor: CursorParam = None,
    per_page: PerPage = DEFAULT_PER_PAGE,
) -> list[AssignedErrorOut]:
    """Errors assigned to the caller in every project where they can read errors, newest
    first by last seen (keyset pages, as the error list)."""
    page = assigned_to(
        ctx.db, principal.user, status=status.status(), cursor=cursor, per_page=per_page
    )
    keyset_headers(request, response, per_page, page.next_cursor, page.prev_cursor)
    return [
        AssignedErrorOut(project_path=a.project.path, **ErrorOut.of(a.error).model_dump())
        for a in page.items
    ]
