"""Sentry's web API field names (reference section 10): what GitLab's Sentry client and
other Sentry API tools read. Plain JSON objects; ``camelCase`` as Sentry spells them."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from tracebox.api import sentry_workflow as workflow
from tracebox.api.timefmt import iso_seconds
from tracebox.models import Project
from tracebox.tracking.models import (
    Activity,
    ActivityKind,
    ErrorDetails,
    ErrorSummary,
    Event,
    ExceptionInfo,
    Frame,
    Mechanism,
)

Json = dict[str, Any]


def organization_slug(project: Project) -> str:
    """The namespace, URL-encoded: ``grp%2Fsub`` for ``grp/sub/web``. Clients put the slug
    in paths as it is (GitLab builds ``/api/0/projects/{org}/{project}/``), and a slash
    there would split it; both GitLab and Tracebox accept ``%2F``."""
    return quote(project.path.rpartition("/")[0] or project.path, safe="")


def organization(project: Project) -> Json:
    namespace = project.path.rpartition("/")[0] or project.path
    return {
        "id": organization_slug(project),
        "slug": organization_slug(project),
        "name": namespace,
        "status": {"id": "active", "name": "active"},
    }


def project_ref(project: Project) -> Json:
    slug = project.path.rpartition("/")[2]
    return {"id": str(project.id), "name": project.name, "slug": slug, "platform": None}


def project(p: Project) -> Json:
    return {
        **project_ref(p),
        "status": "active",
        "dateCreated": iso_seconds(p.created_at),
        "isPublic": False,
        "isMember": True,
        "hasAccess": True,
        "isBookmarked": False,
        "features": [],
        "firstEvent": None,
        "color": "#3f70b3",
        "avatar": {"avatarType": "letter_avatar", "avatarUuid": None},
        "organization": organization(p),
    }


def _metadata(e: ErrorSummary) -> Json:
    return {"type": e.type, "value": e.value} if e.type else {"title": e.title}


def issue(e: ErrorSummary, p: Project, external_url: str) -> Json:
    slug = project_ref(p)["slug"]
    return {
        "id": str(e.id),
        "shortId": f"{slug.upper()}-{e.id}",
        "title": e.title,
        "culprit": e.culprit,
        "permalink": f"{external_url.rstrip('/')}/{quote(p.path)}/-/error_tracking/{e.id}",
        "logger": None,
        "level": e.level,
        "status": e.status.value,
        "statusDetails": workflow.status_details(e.status, e.status_details),
        "isPublic": False,
        "platform": e.platform,
        "type": "error" if e.type else "default",
        "metadata": _metadata(e),
        "count": str(e.events_count),
        "userCount": e.users_count,
        "numComments": 0,
        "firstSeen": iso_seconds(e.first_seen),
        "lastSeen": iso_seconds(e.last_seen),
        "project": project_ref(p),
        "stats": {"24h": [[int(b.time), b.count] for b in e.frequency]},
        "annotations": [],
        "assignedTo": workflow.assigned_to(e.assignee),
        "hasSeen": False,
        "isBookmarked": False,
        "isSubscribed": False,
        "isUnhandled": e.unhandled,
        "subscriptionDetails": None,
        "shareId": None,
    }


def _release(version: str | None) -> Json | None:
    if version is None:
        return None
    short = version.rpartition("@")[2] or version
    return {"version": version, "shortVersion": short, "lastCommit": None, "dateCreated": None}


def issue_details(d: ErrorDetails, p: Project, external_url: str, history: list[Activity]) -> Json:
    body = issue(d.error, p, external_url)
    body["numComments"] = sum(1 for a in history if a.kind is ActivityKind.NOTE)
    body["logger"] = d.latest_event.logger if d.latest_event else None
    body["stats"]["30d"] = [[int(b.time), b.count] for b in d.daily]
    tags = [{"key": t.key, "name": t.key, "totalValues": t.total} for t in d.tags]
    return {
        **body,
        "activity": workflow.activity(history),
        "participants": [],
        "seenBy": [],
        "tags": tags,
        "userReportCount": d.user_report_count,
        "firstRelease": _release(d.first_release),
        "lastRelease": _release(d.last_release),
        "pluginIssues": plugin_issues(d.error),
        "pluginActions": [],
        "pluginContexts": [],
    }


def plugin_issues(e: ErrorSummary) -> list[Json]:
    """The linked GitLab issue as Sentry's GitLab plugin shows it (GitLab reads
    ``pluginIssues[id=gitlab].issue.url``)."""
    if not e.external_issue_url:
        return []
    number = e.external_issue_url.rpartition("/")[2]
    label = f"GL-{number}" if number.isdigit() else "GitLab issue"
    return [
        {
            "id": "gitlab",
            "title": "GitLab",
            "issue": {"url": e.external_issue_url, "label": label},
        }
    ]


def frame(f: Frame) -> Json:
    return {
        "filename": f.filename,
        "absPath": f.abs_path,
        "module": f.module,
        "package": None,
        "platform": None,
        "function": f.function,
        "rawFunction": None,
        "symbol": None,
        "lineNo": f.lineno,
        "colNo": f.colno,
        "inApp": f.in_app,
        "context": [[n, line] for n, line in f.context],
        "vars": f.vars,
        "instructionAddr": None,
        "symbolAddr": None,
        "trust": None,
        "errors": None,
        "data": _frame_data(f),
    }


def _frame_data(f: Frame) -> Json:
    """Sentry's frame ``data`` for source maps: how the frame was mapped, or why not."""
    if f.symbolicated is None:
        return {}
    if f.symbolicated:
        return {"symbolicated": True, "sourcemap": f.source_map, "resolvedWith": f.mapped_with}
    return {
        "symbolicated": False,
        "symbolicationError": f.mapping_error,
        "symbolicationDetail": f.mapping_detail,
    }


def _exception(x: ExceptionInfo) -> Json:
    stacktrace = {"frames": [frame(f) for f in x.frames]} if x.frames else None
    return {
        "type": x.type,
        "value": x.value,
        "module": x.module,
        "mechanism": _mechanism(x.mechanism),
        "stacktrace": stacktrace,
        "rawStacktrace": {"frames": [frame(f) for f in x.raw_frames]} if x.raw_frames else None,
    }


def _mechanism(m: Mechanism | None) -> Json | None:
    """Sentry keeps the mechanism's snake_case keys in its event API."""
    return None if m is None else {k: v for k, v in m.__dict__.items() if v is not None}


def _entries(ev: Event) -> list[Json]:
    entries: list[Json] = []
    if ev.exceptions:
        values = [_exception(x) for x in ev.exceptions]
        system = any(f.in_app is False for x in ev.exceptions for f in x.frames)
        entries.append({"type": "exception", "data": {"values": values, "hasSystemFrames": system}})
    if ev.message:
        entries.append({"type": "message", "data": {"formatted": ev.message}})
    if ev.breadcrumbs:
        entries.append({"type": "breadcrumbs", "data": {"values": _crumbs(ev.breadcrumbs)}})
    if ev.request:
        entries.append({"type": "request", "data": _request(ev.request)})
    return entries


def _crumbs(crumbs: list[Json]) -> list[Json]:
    out = []
    for c in crumbs:
        ts = c.get("timestamp")
        when = iso_seconds(ts) if isinstance(ts, int | float) else None
        keys = ("type", "category", "level", "message", "data")
        out.append({**{k: c.get(k) for k in keys}, "timestamp": when, "event_id": None})
    return out


def _request(r: Json) -> Json:
    keys = ("method", "url", "data", "headers", "cookies", "env", "fragment")
    return {**{k: r.get(k) for k in keys}, "query": r.get("query_string")}


def _event_metadata(ev: Event) -> Json:
    """The event's own, as Sentry's: its main exception, else its title."""
    main = ev.exceptions[-1] if ev.exceptions else None
    if main is not None and main.type:
        return {"type": main.type, "value": main.value or ""}
    return {"title": ev.title}


def event(ev: Event) -> Json:
    return {
        "id": ev.event_id,
        "eventID": ev.event_id,
        "groupID": str(ev.error_id),
        "projectID": str(ev.project_id),
        "dateCreated": iso_seconds(ev.timestamp),
        "dateReceived": iso_seconds(ev.received_at),
        "title": ev.title,
        "message": ev.message,
        "culprit": ev.culprit,
        "location": ev.culprit or None,
        "platform": ev.platform,
        "type": "error" if ev.exceptions else "default",
        "metadata": _event_metadata(ev),
        "tags": [{"key": k, "value": v} for k, v in ev.tags],
        "user": ev.user,
        "contexts": ev.contexts,
        "context": ev.extra,  # Sentry's event API name for `extra`
        "sdk": ev.sdk,
        "errors": [],
        "entries": _entries(ev),
    }
