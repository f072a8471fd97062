"""Settings > Monitor > Error Tracking (Maintainer+): the backend, client keys, and the
Connect button's ``projects.json``."""

from __future__ import annotations

from dataclasses import dataclass

import orjson
from starlette.responses import Response

from tracebox.accounts.policy import MONITOR_DISABLED, Action
from tracebox.accounts.projects import ProjectAccess
from tracebox.errors import BadRequest, InvalidParameter, NotFound, TraceboxError
from tracebox.models import ClientKey
from tracebox.protocol.dsn import build_dsn
from tracebox.sentry_client import SentryError
from tracebox.store import client_keys, projects
from tracebox.tracking import external
from tracebox.tracking import settings as tracking_settings
from tracebox.ui.links import project_url
from tracebox.ui.web import Req, sentence

GITLAB_URL_INVALID = "The GitLab project URL must be an http or https URL without a query."
CONNECTION_FAILED = "Connection failed. Check auth token and try again"
MAX_KEYS_SHOWN = 100
JSON_ERRORS = {401: "401 Unauthorized", 403: "403 Forbidden", 404: "404 Not Found"}


@dataclass(frozen=True)
class KeyView:
    key: ClientKey
    dsn: str
    dsn_with_secret: str  # the deprecated form, for clients that need the secret


@dataclass
class ExternalForm:
    api_url: str = ""
    project: str = ""
    error: str | None = None
    detail: str | None = None


def _settings_access(r: Req, project: str) -> ProjectAccess:
    """Maintainer+; with the Monitor feature off the page still opens to say so."""
    access = r.project(project, Action.UPDATE_PROJECT)
    if access.project.monitor_access_level != MONITOR_DISABLED:
        access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    return access


def _page(
    r: Req,
    access: ProjectAccess,
    form: ExternalForm,
    status: int = 200,
    gitlab_error: str | None = None,
) -> Response:
    if access.project.monitor_access_level == MONITOR_DISABLED:
        return r.render("settings/monitor.html", status, access=access, disabled=True)
    with r.db.read() as conn:
        saved = projects.get_settings(conn, access.project.id)
        link = projects.get_external_link(conn, access.project.id)
        keys = client_keys.list_for_project(conn, access.project.id, limit=MAX_KEYS_SHOWN)
    url = r.ctx.settings.external_url
    views = [
        KeyView(
            k,
            build_dsn(url, k.public_key, k.project_id),
            build_dsn(url, k.public_key, k.project_id, secret_key=k.secret_key),
        )
        for k in keys
    ]
    backend = r.form.get("backend") or (
        "external" if saved and not saved.integrated else "integrated"
    )
    return r.render(
        "settings/monitor.html",
        status,
        access=access,
        disabled=False,
        saved=saved,
        active=r.form.checked("active") if r.form.fields else bool(saved and saved.active),
        backend=backend,
        keys=views,
        primary=next((v for v in views if v.key.active), None),
        external=form,
        link=link,
        link_host=external.host_of(link.api_url) if link else None,
        gitlab_project_url=r.form.text("gitlab_project_url")
        if r.form.fields
        else (saved.gitlab_project_url if saved else None) or "",
        gitlab_error=gitlab_error,
    )


def monitor(r: Req, project: str) -> Response:
    return _page(r, _settings_access(r, project), ExternalForm())


def save_monitor(r: Req, project: str) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    active = r.form.checked("active")
    if r.form.get("backend", "integrated") == "integrated":
        try:
            with r.db.write() as conn:
                tracking_settings.save(
                    conn, access.project.id, active=active, integrated=True, create=True
                )
                if "gitlab_project_url" in r.form.fields:  # absent: leave it as it is
                    tracking_settings.set_gitlab_project_url(
                        conn, access.project.id, r.form.text("gitlab_project_url")
                    )
        except InvalidParameter:
            return _page(r, access, ExternalForm(), 400, gitlab_error=GITLAB_URL_INVALID)
        r.flash("notice", "Your changes have been saved.")
        return r.redirect(project_url(access.project.path, "settings/monitor"))
    form = ExternalForm(api_url=r.form.text("api_url"), project=r.form.text("project"))
    organization, _, slug = form.project.rpartition("/")
    try:
        external.link(
            r.db,
            r.ctx.external,
            access.project.id,
            active=active,
            api_host=form.api_url,
            token=r.form.get("auth_token"),
            organization_slug=organization,
            project_slug=slug,
        )
    except TraceboxError as e:
        form.error = CONNECTION_FAILED if isinstance(e, SentryError) else sentence(e.message)
        form.detail = sentence(e.message) if isinstance(e, SentryError) else None
        return _page(r, access, form, 400)
    r.flash("notice", "Your changes have been saved.")
    return r.redirect(project_url(access.project.path, "settings/monitor"))


def create_key(r: Req, project: str) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    with r.db.write() as conn:
        key = client_keys.create(conn, access.project.id)
    r.flash("notice", f"Client key {key.public_key[:8]}… was created.")
    return r.redirect(project_url(access.project.path, "settings/monitor") + "#client-keys")


def revoke_key(r: Req, project: str, key_id: int) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    with r.db.write() as conn:
        key = client_keys.delete(conn, access.project.id, key_id)
    if key is None:
        raise NotFound("Client Key")
    r.ctx.on_key_deleted(key.public_key)
    r.flash("notice", f"Client key {key.public_key[:8]}… was revoked; its DSN no longer works.")
    return r.redirect(project_url(access.project.path, "settings/monitor") + "#client-keys")


def projects_json(r: Req, project: str) -> Response:
    """GitLab's ``projects.json``: the external server's projects for the Connect button.
    404 when the Monitor feature is off (spec 7); errors as ``{"message": ...}``."""
    try:
        access = r.project(project, Action.ADMIN_ERROR_TRACKING)
        found = external.connect(
            r.db, r.ctx.external, access.project.id, r.query("api_host"), r.query("token")
        )
    except TraceboxError as e:
        message = e.message if isinstance(e, BadRequest) else JSON_ERRORS.get(e.status_code)
        return _json({"message": message}, e.status_code)
    return _json({"projects": [p.__dict__ for p in found]}, 200)


def _json(body: object, status: int) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")
