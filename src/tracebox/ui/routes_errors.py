"""Monitor > Error Tracking: the error list, and changing an error's status."""

from __future__ import annotations

from dataclasses import dataclass, replace

from starlette.datastructures import QueryParams
from starlette.responses import Response

from tracebox.accounts.policy import Action
from tracebox.accounts.projects import ProjectAccess
from tracebox.errors import BadRequest
from tracebox.models import ErrorStatus
from tracebox.store import projects
from tracebox.tracking import ErrorSource, source_for_project
from tracebox.tracking.models import ErrorSort, StatusFilter
from tracebox.ui import charts, firstrun
from tracebox.ui.links import error_url, errors_url, safe_next
from tracebox.ui.render import is_htmx
from tracebox.ui.web import Req

PER_PAGE = 20
MAX_SEARCH = 255
STATUS_VERBS = {
    ErrorStatus.RESOLVED: "resolved",
    ErrorStatus.IGNORED: "ignored",
    ErrorStatus.UNRESOLVED: "reopened",
}


@dataclass(frozen=True)
class ListQuery:
    status: StatusFilter = StatusFilter.UNRESOLVED
    sort: ErrorSort = ErrorSort.LAST_SEEN
    search: str = ""
    cursor: str | None = None

    @classmethod
    def parse(cls, params: QueryParams) -> ListQuery:
        """Unknown filter values fall back to the defaults (a hand-edited URL still works)."""
        status = params.get("status", "")
        sort = params.get("sort", "")
        return cls(
            status=StatusFilter(status) if status in set(StatusFilter) else StatusFilter.UNRESOLVED,
            sort=ErrorSort(sort) if sort in set(ErrorSort) else ErrorSort.LAST_SEEN,
            search=params.get("search", "").replace("\x00", "").strip()[:MAX_SEARCH],
            cursor=params.get("cursor") or None,
        )

    @property
    def is_default(self) -> bool:
        return self == ListQuery()

    def url(self, path: str, **changes: str | None) -> str:
        """This list's URL with some parameters changed; changing a filter starts over at
        the first page."""
        q = replace(self, **{"cursor": None, **changes})  # type: ignore[arg-type]
        return errors_url(
            path,
            status=q.status.value if q.status != StatusFilter.UNRESOLVED else None,
            sort=q.sort.value if q.sort != ErrorSort.LAST_SEEN else None,
            search=q.search,
            cursor=q.cursor,
        )


def tracking_source(r: Req, access: ProjectAccess) -> ErrorSource:
    return source_for_project(r.db, access.project.id, r.ctx.external)


def error_list(r: Req, project: str) -> Response:
    access = r.project(project, Action.READ_ERRORS)
    query = ListQuery.parse(r.request.query_params)
    source = tracking_source(r, access)
    with r.db.read() as conn:
        settings = projects.get_settings(conn, access.project.id)
    page = source.list(
        status=query.status,
        search=query.search or None,
        sort=query.sort,
        cursor=query.cursor,
        per_page=PER_PAGE,
    )
    guide = None
    if not page.items and query.is_default:
        anything = source.list(
            status=StatusFilter.ALL, search=None, sort=ErrorSort.LAST_SEEN, cursor=None, per_page=1
        )
        guide = None if anything.items else firstrun.guide(r, access, settings)
    if guide is None and r.request.headers.get("hx-target") == firstrun.PROBE_ID:
        return Response(headers={"HX-Refresh": "true"})  # the first error arrived: reload
    timelines = {
        e.id: charts.bar_chart(e.frequency, width=144, height=28, gap=1.5) for e in page.items
    }
    return r.render(
        "errors/list.html",
        access=access,
        page=page,
        query=query,
        guide=guide,
        settings=settings,
        timelines=timelines,
        statuses=list(StatusFilter),
        sorts=SORT_LABELS,
    )


SORT_LABELS = {
    ErrorSort.LAST_SEEN: "Last seen",
    ErrorSort.FIRST_SEEN: "First seen",
    ErrorSort.FREQUENCY: "Frequency",
}


def change_status(r: Req, project: str, error_id: int) -> Response:
    access = r.project(project, Action.UPDATE_ERROR)
    try:
        status = ErrorStatus(r.form.get("status"))
    except ValueError as e:
        raise BadRequest("status is invalid") from e
    source = tracking_source(r, access)
    summary = source.update_status(error_id, status)
    if not is_htmx(r.request):  # an htmx swap shows the change itself
        r.flash("notice", f"The error “{summary.title[:80]}” was {STATUS_VERBS[status]}.")
    default = error_url(access.project.path, error_id)
    return r.redirect(safe_next(r.form.get("next"), default))
