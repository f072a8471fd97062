"""The projects list, creating a project, and a project's general settings."""

from __future__ import annotations

from starlette.responses import Response

from tracebox.accounts import projects as project_service
from tracebox.accounts.policy import MONITOR_LEVELS, Action
from tracebox.errors import Conflict, InvalidParameter
from tracebox.store import members, projects
from tracebox.tracking import settings as tracking_settings
from tracebox.ui.links import project_url
from tracebox.ui.web import Req, sentence

PER_PAGE = 50


def index(r: Req) -> Response:
    raw = r.query("page", "1")
    page = int(raw) if raw.isdigit() and 0 < int(raw) < 1_000_000 else 1
    member = None if r.principal.is_admin else r.principal.user.id
    with r.db.read() as conn:
        total = members.count_visible(conn, member)
        found = members.list_visible(conn, member, offset=(page - 1) * PER_PAGE, limit=PER_PAGE)
    pages = max(1, (total + PER_PAGE - 1) // PER_PAGE)
    return r.render("projects/index.html", projects=found, total=total, page=page, pages=pages)


def new_form(r: Req) -> Response:
    return r.render("projects/new.html", values={"tracking": "1"}, error=None)


def create(r: Req) -> Response:
    values = {k: r.form.text(k) for k in ("name", "path")}
    values["tracking"] = "1" if r.form.checked("tracking") else ""
    try:
        with r.db.write() as conn:
            project = project_service.create(
                conn,
                r.principal,
                name=values["name"],
                path=values["path"] or None,
                monitor="enabled",
            )
            if values["tracking"]:
                tracking_settings.save(conn, project.id, active=True, integrated=True, create=True)
    except (InvalidParameter, Conflict) as e:
        return r.render("projects/new.html", 400, values=values, error=sentence(e.message))
    r.flash("notice", f"Project {project.name} was created.")
    return r.redirect(project_url(project.path, "error_tracking"))


def project_home(r: Req, project: str) -> Response:
    access = r.project(project, Action.READ_PROJECT)
    return r.redirect(project_url(access.project.path, "error_tracking"))


def general_form(r: Req, project: str) -> Response:
    access = r.project(project, Action.UPDATE_PROJECT)
    return r.render("settings/general.html", access=access, error=None, levels=MONITOR_LEVELS)


def general_save(r: Req, project: str) -> Response:
    access = r.project(project, Action.UPDATE_PROJECT)
    try:
        name = project_service.validate_name(r.form.text("name"))
        monitor = project_service.validate_monitor_level(r.form.get("monitor_access_level"))
    except InvalidParameter as e:
        return r.render(
            "settings/general.html",
            400,
            access=access,
            error=sentence(e.message),
            levels=MONITOR_LEVELS,
        )
    with r.db.write() as conn:
        projects.update(conn, access.project.id, name=name, monitor_access_level=monitor)
    r.flash("notice", "Your changes have been saved.")
    return r.redirect(project_url(access.project.path, "settings/general"))
