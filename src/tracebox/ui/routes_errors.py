"""Monitor > Error Tracking: the error list with its search, saved filters and
environment selector, and changing an error's status."""

from __future__ import annotations

from dataclasses import dataclass, replace
from urllib.parse import urlencode

from starlette.datastructures import QueryParams
from starlette.responses import Response

from tracebox.accounts.policy import MIN_LEVEL, Action
from tracebox.accounts.projects import ProjectAccess
from tracebox.models import ErrorStatus
from tracebox.search import QuerySyntaxError, SearchQuery
from tracebox.store import projects, seen
from tracebox.store import triage as store_triage
from tracebox.tracking import ErrorSource, source_for_project
from tracebox.tracking.assignees import actor
from tracebox.tracking.models import ErrorChange, ErrorSort, ErrorSummary, Page
from tracebox.tracking.queries import DEFAULT_QUERY, parse_query
from tracebox.ui import charts, firstrun
from tracebox.ui.links import error_url, project_url, safe_next
from tracebox.ui.render import is_htmx
from tracebox.ui.triage_forms import status_change
from tracebox.ui.web import Req

PER_PAGE = 20
STATUS_VERBS = {
    ErrorStatus.RESOLVED: "resolved",
    ErrorStatus.IGNORED: "ignored",
    ErrorStatus.UNRESOLVED: "reopened",
}
# Saved filters, shown as tabs above the search box (Sentry's "Unresolved", "For Review"...).
SAVED = {
    "Unresolved": "is:unresolved",
    "For review": "is:for_review",
    "Assigned to me": "is:unresolved assigned:me",
    "Ignored": "is:ignored",
    "Resolved": "is:resolved",
    "All": "",
}
SORT_LABELS = {
    ErrorSort.LAST_SEEN: "Last seen",
    ErrorSort.FIRST_SEEN: "First seen",
    ErrorSort.FREQUENCY: "Frequency",
}
LEGACY_STATUSES = ("unresolved", "resolved", "ignored")


@dataclass(frozen=True)
class ListQuery:
    query: str = DEFAULT_QUERY
    sort: ErrorSort = ErrorSort.LAST_SEEN
    cursor: str | None = None

    @classmethod
    def parse(cls, params: QueryParams) -> ListQuery:
        """Unknown sort values fall back to the default (a hand-edited URL still works);
        the older ``status`` and ``search`` parameters become a query."""
        sort = params.get("sort", "")
        text = params.get("query")
        if text is None:
            status = params.get("status", "unresolved")
            words = [f"is:{status}"] if status in LEGACY_STATUSES else []
            search = params.get("search", "").strip()
            text = " ".join([*words, *([f'"{search}"'] if search else [])])
        return cls(
            query=text.replace("\x00", "").strip(),
            sort=ErrorSort(sort) if sort in set(ErrorSort) else ErrorSort.LAST_SEEN,
            cursor=params.get("cursor") or None,
        )

    @property
    def is_default(self) -> bool:
        return self == ListQuery()

    def url(self, path: str, **changes: str | None) -> str:
        """This list's URL with some parameters changed; changing a filter starts over at
        the first page. ``query=`` (empty: every error) is kept, unlike other blanks."""
        q = replace(self, **{"cursor": None, **changes})  # type: ignore[arg-type]
        params = {
            "query": q.query if q.query != DEFAULT_QUERY else None,
            "sort": q.sort.value if q.sort != ErrorSort.LAST_SEEN else None,
            "cursor": q.cursor,
        }
        found = {k: v for k, v in params.items() if v is not None and (v or k == "query")}
        return project_url(path, "error_tracking") + (f"?{urlencode(found)}" if found else "")


def tracking_source(r: Req, access: ProjectAccess) -> ErrorSource:
    return source_for_project(r.db, access.project.id, r.ctx.external)


def environment_choice(r: Req, access: ProjectAccess) -> str | None:
    """The environment chosen with ``?environment=`` (remembered for this user and
    project; empty: all), else the one remembered."""
    user_id = r.principal.user.id
    chosen = r.request.query_params.get("environment")
    if chosen is None:
        with r.db.read() as conn:
            return seen.chosen_environment(conn, user_id, access.project.id)
    chosen = chosen.replace("\x00", "").strip()[:255] or None
    with r.db.write() as conn:
        seen.choose_environment(conn, user_id, access.project.id, chosen)
    return chosen


def error_list(r: Req, project: str) -> Response:
    access = r.project(project, Action.READ_ERRORS)
    query = ListQuery.parse(r.request.query_params)
    source = tracking_source(r, access)
    with r.db.read() as conn:
        settings = projects.get_settings(conn, access.project.id)
    environment = environment_choice(r, access)
    problem: QuerySyntaxError | None = None
    try:
        parsed = parse_query(r.ctx.settings, query.query)
    except QuerySyntaxError as e:
        problem, parsed = e, None
    page: Page[ErrorSummary] = Page([], None, None)
    if parsed is not None:
        page = source.list(
            query=parsed,
            sort=query.sort,
            cursor=query.cursor,
            per_page=PER_PAGE,
            environment=environment,
            viewer=r.principal.user.id,
        )
    guide = None
    if not page.items and query.is_default and not environment:
        anything = source.list(
            query=SearchQuery(), sort=ErrorSort.LAST_SEEN, cursor=None, per_page=1
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
        problem=problem,
        guide=guide,
        settings=settings,
        timelines=timelines,
        saved=SAVED,
        sorts=SORT_LABELS,
        environment=environment,
        environments=source.environments(),
        members=assignable_members(r, access),
    )


def assignable_members(r: Req, access: ProjectAccess) -> list[tuple[int, str]]:
    """(user id, username) of the members an error can be assigned to."""
    with r.db.read() as conn:
        return store_triage.assignable_members(
            conn, access.project.id, int(MIN_LEVEL[Action.READ_ERRORS])
        )


def change_status(r: Req, project: str, error_id: int) -> Response:
    access = r.project(project, Action.UPDATE_ERROR)
    change = status_change(r.form)
    source = tracking_source(r, access)
    summary = source.update(error_id, ErrorChange(status=change), actor(r.principal.user))
    if not is_htmx(r.request):  # an htmx swap shows the change itself
        verb = STATUS_VERBS[change.status]
        r.flash("notice", f"The error “{summary.title[:80]}” was {verb}.")
    default = error_url(access.project.path, error_id)
    return r.redirect(safe_next(r.form.get("next"), default))
