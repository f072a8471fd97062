"""The Sentry-compatible web API subset under /api/0/ (reference section 10).

The organization is the project's namespace: ``acme/web`` is project ``web`` of
organization ``acme``. Lists paginate with Sentry's ``Link`` header, both directions
always present, ``results="true|false"`` saying whether that page has data.
"""

from __future__ import annotations

import contextlib
import re
from typing import Annotated, Any
from urllib.parse import unquote, urlencode

from fastapi import APIRouter, Body, Query, Request, Response
from sqlalchemy import Connection

from tracebox.accounts import projects as project_access
from tracebox.accounts.policy import Action, Principal
from tracebox.accounts.projects import ProjectAccess
from tracebox.api import sentry_shapes as shapes
from tracebox.api import sentry_workflow as workflow
from tracebox.api.context import ApiContext, Ctx, CurrentPrincipal
from tracebox.api.pagination import MAX_PER_PAGE
from tracebox.errors import Forbidden, InvalidParameter, NotFound
from tracebox.models import MAX_ID
from tracebox.store import errors_read, members, projects
from tracebox.tracking import ErrorSource, source_for_project
from tracebox.tracking import cursor as cursors
from tracebox.tracking import settings as tracking_settings
from tracebox.tracking.models import ErrorSort
from tracebox.tracking.queries import DEFAULT_QUERY, list_query

router = APIRouter()
SORTS = {"date": ErrorSort.LAST_SEEN, "new": ErrorSort.FIRST_SEEN, "freq": ErrorSort.FREQUENCY}
Json = dict[str, Any]
NO_GITLAB_URL = (
    "gitlab_project_url is not set: set the project's GitLab project URL in its error "
    "tracking settings, so a linked issue number has a URL"
)
MAX_LINKED_PROJECTS = 50  # linked projects asked for an issue id that is not stored here


def _link(
    request: Request, response: Response, prev: str | None, next_: str | None, here: str
) -> None:
    """Sentry's ``Link`` header: both directions always, ``results`` saying whether that
    page has data; the URLs' query values URL-encoded (a search holds spaces, ``:``)."""
    kept = [(k, v) for k, v in request.query_params.multi_items() if k != "cursor"]
    base = str(request.url.replace(query=""))
    parts = [
        f'<{base}?{urlencode([*kept, ("cursor", c or here)])}>; rel="{rel}"; '
        f'results="{str(bool(c)).lower()}"; cursor="{c or here}"'
        for rel, c in (("previous", prev), ("next", next_))
    ]
    response.headers["Link"] = ", ".join(parts)


def _source(ctx: ApiContext, access: ProjectAccess) -> ErrorSource:
    return source_for_project(ctx.db, access.project.id, ctx.external)


def _issue(
    ctx: ApiContext, principal: Principal, issue_id: str, action: Action
) -> tuple[ProjectAccess, ErrorSource, int]:
    """The project holding issue ``issue_id`` and its error source: the project of a
    stored error, else the project linked to a Sentry server whose issue it is (among the
    linked projects the principal may ``action`` on), as GitLab reads ``/issues/{id}/``."""
    if not (issue_id.isascii() and issue_id.isdigit()) or int(issue_id) > MAX_ID:
        raise NotFound("Issue")
    error_id = int(issue_id)
    with ctx.db.read() as conn:
        project_id = errors_read.project_of_error(conn, error_id)
        if project_id is not None:
            access = project_access.resolve_id(conn, principal, project_id, action)
            return access, _source(ctx, access), error_id
        linked = [
            found
            for pid in projects.linked_to_sentry(conn, MAX_LINKED_PROJECTS)
            if (found := _may(conn, principal, pid, action)) is not None
        ]
    for access in linked:
        source = _source(ctx, access)
        with contextlib.suppress(NotFound):
            source.get(error_id)  # cached for the handler's own call
            return access, source, error_id
    raise NotFound("Issue")


def _may(
    conn: Connection, principal: Principal, project_id: int, action: Action
) -> ProjectAccess | None:
    try:
        return project_access.resolve_id(conn, principal, project_id, action)
    except (NotFound, Forbidden):
        return None


@router.get("/projects/")
def list_projects(
    request: Request,
    response: Response,
    ctx: Ctx,
    principal: CurrentPrincipal,
    cursor: Annotated[str | None, Query(max_length=100)] = None,
) -> list[Json]:
    offset = c.id if (c := cursors.decode(cursor)) else 0
    member = None if principal.is_admin else principal.user.id
    with ctx.db.read() as conn:
        total = members.count_visible(conn, member)
        found = members.list_visible(conn, member, offset=offset, limit=MAX_PER_PAGE)
    more, back = offset + MAX_PER_PAGE < total, offset > 0
    prev_c = f"0:{max(0, offset - MAX_PER_PAGE)}:1" if back else None
    _link(request, response, prev_c, f"0:{offset + MAX_PER_PAGE}:0" if more else None, "0:0:0")
    return [shapes.project(p) for p in found]


@router.get("/projects/{org}/{project}/issues/")
def list_issues(
    request: Request,
    response: Response,
    org: str,
    project: str,
    ctx: Ctx,
    principal: CurrentPrincipal,
    query: Annotated[str | None, Query(max_length=4096)] = None,
    environment: Annotated[str | None, Query(max_length=255, pattern=r"^[^\x00]*$")] = None,
    sort: str = "date",
    limit: Annotated[int, Query(ge=1, le=MAX_PER_PAGE)] = MAX_PER_PAGE,
    cursor: Annotated[str | None, Query(max_length=100)] = None,
    stats_period: Annotated[str, Query(alias="statsPeriod", max_length=8)] = "24h",
) -> list[Json]:
    if sort not in SORTS:
        raise InvalidParameter("sort is invalid")
    with ctx.db.read() as conn:
        path = unquote(f"{org}/{project}")
        access = project_access.resolve(conn, principal, path, Action.READ_ERRORS)
    # Sentry: no query means "is:unresolved"; an empty one means every error.
    wanted = list_query(ctx.settings, query=DEFAULT_QUERY if query is None else query)
    page = _source(ctx, access).list(
        query=wanted,
        sort=SORTS[sort],
        cursor=cursor,
        per_page=limit,
        environment=environment,
        viewer=principal.user.id,
    )
    _link(request, response, page.prev_cursor, page.next_cursor, cursor or "0:0:0")
    items = [shapes.issue(e, access.project, ctx.settings.external_url) for e in page.items]
    if stats_period == "":
        for item in items:
            item["stats"] = {}
    return items


@router.put("/projects/{org}/{project}/issues/")
def bulk_update_issues(
    org: str,
    project: str,
    ctx: Ctx,
    principal: CurrentPrincipal,
    body: Annotated[dict[str, Any], Body()],
    ids: Annotated[list[str] | None, Query(alias="id", max_length=1000)] = None,
    query: Annotated[str | None, Query(max_length=4096)] = None,
) -> Json:
    """Sentry's bulk mutation: the issues ``?id=1&id=2`` or those matching ``?query=``
    get the body's ``status``, ``statusDetails``, ``assignedTo`` (Developer+)."""
    with ctx.db.read() as conn:
        path = unquote(f"{org}/{project}")
        access = project_access.resolve(conn, principal, path, Action.UPDATE_ERROR)
    if ids is not None and not all(i.isascii() and i.isdigit() and len(i) < 19 for i in ids):
        raise InvalidParameter("id is invalid")
    source = _source(ctx, access)
    if body.get("merge") in (1, True, "1"):
        return _merge(ctx, source, principal, ids)
    change = workflow.change_of(ctx.db, access.project.id, body, principal.user)
    if change.is_empty():
        raise InvalidParameter("status or assignedTo is missing")
    wanted = None if ids is not None else list_query(ctx.settings, query=query or "")
    result = source.bulk_update(
        ids=[int(i) for i in ids] if ids is not None else None,
        query=wanted,
        change=change,
        actor=workflow.actor(principal.user),
        viewer=principal.user.id,
        max_errors=ctx.settings.bulk_max_errors,
        batch_size=ctx.settings.bulk_batch_errors,
    )
    answer = {k: v for k, v in body.items() if k in ("status", "statusDetails", "assignedTo")}
    return {**answer, "changed": result.changed}


def _merge(
    ctx: ApiContext, source: ErrorSource, principal: Principal, ids: list[str] | None
) -> Json:
    """Sentry's answer to ``{"merge": 1}``: the parent and the merged children."""
    if not ids:
        raise InvalidParameter("id is missing (name the issues to merge)")
    wanted = sorted({int(i) for i in ids})
    parent = source.merge(
        wanted,
        workflow.actor(principal.user),
        max_errors=ctx.settings.bulk_max_errors,
        batch_size=ctx.settings.bulk_batch_errors,
    )
    children = [str(i) for i in wanted if i != parent]
    return {"merge": {"parent": str(parent), "children": children}}


@router.get("/issues/{issue_id}/")
@router.get("/organizations/{org}/issues/{issue_id}/")
def get_issue(issue_id: str, ctx: Ctx, principal: CurrentPrincipal) -> Json:
    access, source, error_id = _issue(ctx, principal, issue_id, Action.READ_ERRORS)
    details = source.get(error_id)
    history = source.activity(error_id)
    return shapes.issue_details(details, access.project, ctx.settings.external_url, history)


@router.get("/issues/{issue_id}/events/latest/")
@router.get("/organizations/{org}/issues/{issue_id}/events/latest/")
def latest_event(issue_id: str, ctx: Ctx, principal: CurrentPrincipal) -> Json:
    _, source, error_id = _issue(ctx, principal, issue_id, Action.READ_ERRORS)
    details = source.get(error_id)
    if details.latest_event is None:
        raise NotFound("Event")
    return shapes.event(details.latest_event)


@router.get("/issues/{issue_id}/events/{event_id}/")
@router.get("/organizations/{org}/issues/{issue_id}/events/{event_id}/")
def issue_event(issue_id: str, event_id: str, ctx: Ctx, principal: CurrentPrincipal) -> Json:
    """One event of the issue, telling its own title and message."""
    if not re.fullmatch(r"[0-9a-fA-F-]{32,36}", event_id):
        raise NotFound("Event")
    _, source, error_id = _issue(ctx, principal, issue_id, Action.READ_ERRORS)
    return shapes.event(source.event(error_id, event_id))


@router.get("/organizations/{org}/repos/")
def list_repos(org: str, ctx: Ctx, principal: CurrentPrincipal) -> list[Json]:
    """No repositories: so GitLab's "Create issue" links the issue through the plugin
    endpoint below (a repository would need GitLab's project id, unknown here)."""
    member = None if principal.is_admin else principal.user.id
    with ctx.db.read() as conn:
        if not members.namespace_visible(conn, member, unquote(org)):
            raise NotFound("Organization")
    return []


@router.post("/issues/{issue_id}/plugins/gitlab/link/")
def link_gitlab_issue(
    issue_id: str, ctx: Ctx, principal: CurrentPrincipal, body: Annotated[dict[str, Any], Body()]
) -> Json:
    """GitLab's "Create issue" on an error: link GitLab issue ``issue_id`` (its number in
    the project) to the error, under the project's ``gitlab_project_url`` setting."""
    access, source, error_id = _issue(ctx, principal, issue_id, Action.UPDATE_ERROR)
    number = str(body.get("issue_id", ""))
    if not (number.isascii() and number.isdigit()) or not 0 < int(number) <= MAX_ID:
        raise InvalidParameter("issue_id is invalid")
    with ctx.db.read() as conn:
        url = tracking_settings.issue_url(
            tracking_settings.get(conn, access.project.id), int(number)
        )
    if url is None:
        raise InvalidParameter(NO_GITLAB_URL)
    source.link_issue(error_id, url, workflow.actor(principal.user))
    return {"message": "Successfully linked issue.", "link": url, "label": f"GL-{number}"}


@router.put("/issues/{issue_id}/")
@router.put("/organizations/{org}/issues/{issue_id}/")
def update_issue(
    issue_id: str, ctx: Ctx, principal: CurrentPrincipal, body: Annotated[dict[str, Any], Body()]
) -> Json:
    """Sentry answers with the changed fields; GitLab only needs a non-empty object."""
    access, source, error_id = _issue(ctx, principal, issue_id, Action.UPDATE_ERROR)
    change = workflow.change_of(ctx.db, access.project.id, body, principal.user)
    if change.is_empty():
        current = source.get(error_id).error
    else:
        current = source.update(error_id, change, workflow.actor(principal.user))
    return {
        "status": current.status.value,
        "statusDetails": workflow.status_details(current.status, current.status_details),
        "assignedTo": workflow.assigned_to(current.assignee),
    }
