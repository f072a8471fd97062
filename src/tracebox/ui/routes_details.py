"""The details page of one error, and release health."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from markupsafe import Markup
from starlette.responses import Response

from tracebox import releases as release_records
from tracebox.accounts.policy import Action
from tracebox.accounts.projects import ProjectAccess
from tracebox.errors import BadRequest
from tracebox.models import ErrorStatus
from tracebox.store import artifacts, projects
from tracebox.store import releases as release_store
from tracebox.symbolication import FAILURE_TITLES
from tracebox.tracking import IntegratedSource
from tracebox.tracking.cursor import MAX_CURSOR_LENGTH
from tracebox.tracking.issue_links import new_issue_url
from tracebox.tracking.models import Activity, ActivityKind, ErrorDetails
from tracebox.ui import charts, markdown, presenters, sdk_sections
from tracebox.ui.links import error_url
from tracebox.ui.privacy_marks import ScrubMarks
from tracebox.ui.routes_errors import assignable_members, environment_choice, tracking_source
from tracebox.ui.web import Req

RELEASE_CHOICES = 20  # releases offered by "resolve in release"


def error_details(r: Req, project: str, error_id: int) -> Response:
    access = r.project(project, Action.READ_ERRORS)
    cursor = r.query("cursor") or None
    if cursor is not None and len(cursor) > MAX_CURSOR_LENGTH:
        raise BadRequest("cursor is invalid")
    raw = r.query("raw") == "1"  # the minified frames of a source-mapped stack trace
    source = tracking_source(r, access)
    environment = environment_choice(r, access)
    details = source.get(error_id)
    if details.error.id != error_id:  # merged into another error: go there
        return r.redirect(error_url(access.project.path, details.error.id))
    # One event per page: its cursors step to the next older and newer events.
    step = source.events(error_id, cursor=cursor, per_page=1, environment=environment)
    event = step.items[0] if step.items else (None if environment else details.latest_event)
    extras = sdk_sections.EventExtras()
    if isinstance(source, IntegratedSource):  # a linked Sentry keeps its own
        extras = sdk_sections.load(
            r.db,
            access.project.id,
            error_id,
            event,
            max_project_bytes=r.ctx.settings.attachments_max_project_bytes,
        )
    return r.render(
        "errors/details.html",
        access=access,
        details=details,
        error=details.error,
        environment=environment,
        environments=source.environments(),
        timeline=timeline(source.activity(error_id)),
        members=assignable_members(r, access),
        releases=source.release_names()[:RELEASE_CHOICES],
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
        create_issue_url=_create_issue_url(r, access, details),
    )


def _create_issue_url(r: Req, access: ProjectAccess, details: ErrorDetails) -> str | None:
    """GitLab's (or GitHub's) new-issue form for this error, when the project's settings
    name its GitLab project (``gitlab_project_url``)."""
    with r.db.read() as conn:
        found = projects.get_settings(conn, access.project.id)
    tracker = found.gitlab_project_url if found else None
    if not tracker:
        return None
    link = r.ctx.settings.external_url.rstrip("/") + error_url(
        access.project.path, details.error.id
    )
    return new_issue_url(tracker, details.error, details.latest_event, link)


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
    environment = environment_choice(r, access)
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
        releases=[x for x in source.releases() if environment in (None, x.environment)],
        overview=overview,
        unreleased_artifacts=unreleased,
        environment=environment,
        environments=source.environments(),
    )


@dataclass(frozen=True)
class Entry:
    """One line of the details page's timeline; a comment carries its rendered HTML."""

    activity: Activity
    html: Markup | None
    sentence: str


def timeline(items: list[Activity]) -> list[Entry]:
    return [
        Entry(a, markdown.render(a.text) if a.text is not None else None, describe(a))
        for a in items
    ]


def describe(a: Activity) -> str:
    """What happened, as a sentence after the actor's name."""
    d = a.data
    sentences = {
        ActivityKind.NOTE: "commented",
        ActivityKind.SET_RESOLVED: "resolved this error",
        ActivityKind.SET_RESOLVED_IN_RELEASE: f"resolved this error in release {d.get('version')}",
        ActivityKind.SET_RESOLVED_IN_NEXT_RELEASE: "resolved this error in the next release"
        + (f" (after {d['version']})" if d.get("version") else ""),
        ActivityKind.SET_UNRESOLVED: _unresolved(d),
        ActivityKind.SET_IGNORED: _ignored(d),
        ActivityKind.SET_REGRESSION: "marked this error as a regression"
        + (f": an event of release {d['release']}" if d.get("release") else ": a new event"),
        ActivityKind.ASSIGNED: f"assigned this error to {d.get('username', 'someone')}",
        ActivityKind.UNASSIGNED: "unassigned this error",
        ActivityKind.MERGE: _merged(d),
        ActivityKind.UNMERGE: "unmerged a fingerprint into a new error",
        ActivityKind.REVIEWED: "marked this error as reviewed",
        ActivityKind.ISSUE_LINKED: f"linked the issue {d['url']}"
        if d.get("url")
        else "unlinked the issue",
    }
    return sentences.get(a.kind, a.kind.value.replace("_", " "))


def _merged(d: dict[str, Any]) -> str:
    n = len(d.get("merged", []))
    return f"merged {n} error{'' if n == 1 else 's'} into this one"


def _unresolved(d: dict[str, object]) -> str:
    reasons = {
        "ignore_until": "the time it was ignored for has passed",
        "ignore_count": "it happened as many more times as it was ignored for",
        "ignore_user_count": "it affected as many more users as it was ignored for",
    }
    reason = reasons.get(str(d.get("reason")))
    return f"unresolved this error: {reason}" if reason else "unresolved this error"


def _ignored(d: dict[str, object]) -> str:
    if d.get("ignoreCount"):
        return f"ignored this error until it happens {d['ignoreCount']} more times"
    if d.get("ignoreUserCount"):
        return f"ignored this error until it affects {d['ignoreUserCount']} more users"
    if d.get("ignoreDuration"):
        return f"ignored this error for {d['ignoreDuration']} minutes"
    return "ignored this error"
