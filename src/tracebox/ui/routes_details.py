"""The details page of one error, and release health."""

from __future__ import annotations

from starlette.responses import Response

from tracebox import releases as release_records
from tracebox.accounts.policy import Action
from tracebox.errors import BadRequest
from tracebox.models import ErrorStatus
from tracebox.store import artifacts
from tracebox.store import releases as release_store
from tracebox.symbolication import FAILURE_TITLES
from tracebox.tracking import IntegratedSource
from tracebox.tracking.cursor import MAX_CURSOR_LENGTH
from tracebox.ui import charts, presenters, sdk_sections
from tracebox.ui.links import error_url
from tracebox.ui.privacy_marks import ScrubMarks
from tracebox.ui.routes_errors import tracking_source
from tracebox.ui.web import Req


def error_details(r: Req, project: str, error_id: int) -> Response:
    access = r.project(project, Action.READ_ERRORS)
    cursor = r.query("cursor") or None
    if cursor is not None and len(cursor) > MAX_CURSOR_LENGTH:
        raise BadRequest("cursor is invalid")
    raw = r.query("raw") == "1"  # the minified frames of a source-mapped stack trace
    source = tracking_source(r, access)
    details = source.get(error_id)
    # One event per page: its cursors step to the next older and newer events.
    step = source.events(error_id, cursor=cursor, per_page=1)
    event = step.items[0] if step.items else details.latest_event
    extras = sdk_sections.EventExtras()
    if isinstance(source, IntegratedSource):  # a linked Sentry keeps its own
        extras = sdk_sections.load(r.db, access.project.id, error_id, event)
    return r.render(
        "errors/details.html",
        access=access,
        details=details,
        error=details.error,
        event=event,
        older=step.next_cursor,
        newer=step.prev_cursor,
        stepped=cursor is not None,
        exceptions=presenters.exception_views(event, raw=raw) if event else [],
        raw=raw,
        cursor=cursor,
        failure_titles=FAILURE_TITLES,
        crumbs=presenters.breadcrumbs(event) if event else [],
        request_rows=presenters.request_rows(event.request if event else None),
        headers=presenters.rows((event.request or {}).get("headers")) if event else [],
        user_rows=presenters.rows(event.user) if event else [],
        contexts=presenters.context_sections(event.contexts) if event else [],
        sdk_rows=presenters.rows(event.sdk) if event else [],
        extra_rows=presenters.value_rows(event.extra) if event else [],
        scrub=ScrubMarks(event.scrubbed) if event else None,
        hourly=charts.bar_chart(details.error.frequency, width=480, height=96, gap=2),
        daily=charts.bar_chart(details.daily, width=480, height=96, gap=2, daily=True),
        statuses=ErrorStatus,
        extras=extras,
    )


def sentry_issue_link(r: Req, project: str, error_id: int) -> Response:
    """Sentry's issue URL, ``/{organization}/{project}/issues/{id}``, as GitLab's "View in
    Sentry" builds it: the error's page here, which checks who may see it (so this
    rewrite needs no sign-in and tells nothing)."""
    return r.redirect(error_url(project.strip("/"), error_id))


def releases(r: Req, project: str) -> Response:
    """Release health per environment, and every release with its deploys, artifacts
    and new errors (sentry-cli's, events' and sessions' releases alike)."""
    access = r.project(project, Action.READ_ERRORS)
    source = tracking_source(r, access)
    overview: list[release_records.ReleaseOverview] = []
    unreleased = 0
    if isinstance(source, IntegratedSource):  # a linked Sentry keeps its own artifacts
        with r.db.read() as conn:
            health = [
                (c.release, c.environment, c.last_started)
                for c in release_store.release_counts(conn, access.project.id)
            ]
            overview = release_records.overview(conn, access.project.id, health)
            unreleased = len(artifacts.list_files(conn, access.project.id, "", limit=1))
    return r.render(
        "releases.html",
        access=access,
        releases=source.releases(),
        overview=overview,
        unreleased_artifacts=unreleased,
    )
