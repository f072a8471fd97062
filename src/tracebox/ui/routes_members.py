"""Project members: everyone in the project sees the list; Maintainers and above add,
change and remove members (only Owners touch the Owner role: ``accounts.membership``)."""

from __future__ import annotations

from starlette.responses import Response

from tracebox.accounts import membership
from tracebox.accounts.policy import Action
from tracebox.errors import BadRequest, Conflict, Forbidden, InvalidParameter, NotFound
from tracebox.models import AccessLevel
from tracebox.store import accounts, members
from tracebox.ui.links import project_url
from tracebox.ui.web import Req, sentence

MAX_MEMBERS_SHOWN = 500
FORM_ERRORS = (InvalidParameter, Conflict, BadRequest, NotFound, Forbidden)


def index(r: Req, project: str) -> Response:
    access = r.project(project, Action.READ_MEMBERS)
    with r.db.read() as conn:
        found = members.list_page(conn, access.project.id, offset=0, limit=MAX_MEMBERS_SHOWN)
    return r.render("members.html", access=access, members=found, levels=list(AccessLevel))


def _level(r: Req) -> AccessLevel:
    raw = r.form.get("access_level")
    return membership.access_level(int(raw) if raw.isdigit() else 0)


def _back(r: Req, path: str, message: str, kind: str = "notice") -> Response:
    r.flash(kind, message)
    return r.redirect(project_url(path, "project_members"))


def add(r: Req, project: str) -> Response:
    access = r.project(project, Action.ADMIN_MEMBERS)
    username = r.form.text("username")
    try:
        level = _level(r)
        with r.db.write() as conn:
            user = accounts.get_by_username(conn, username) if username else None
            if user is None:
                raise InvalidParameter(
                    f"there is no user {username!r}" if username else "username is missing"
                )
            membership.add(conn, access, user.id, level)
    except FORM_ERRORS as e:
        return _back(r, access.project.path, _why(e), "alert")
    return _back(r, access.project.path, f"{user.username} was added as {level.name.title()}.")


def update(r: Req, project: str, user_id: int) -> Response:
    access = r.project(project, Action.ADMIN_MEMBERS)
    try:
        level = _level(r)
        with r.db.write() as conn:
            member = membership.update(conn, access, user_id, level)
    except FORM_ERRORS as e:
        return _back(r, access.project.path, _why(e), "alert")
    return _back(r, access.project.path, f"{member.user.username} is now {level.name.title()}.")


def remove(r: Req, project: str, user_id: int) -> Response:
    access = r.project(project, Action.ADMIN_MEMBERS)
    try:
        with r.db.write() as conn:
            membership.remove(conn, access, user_id)
    except FORM_ERRORS as e:
        return _back(r, access.project.path, _why(e), "alert")
    return _back(r, access.project.path, "The member was removed.")


def _why(error: Exception) -> str:
    if isinstance(error, Forbidden):
        return "Only Owners can grant, change or remove the Owner role."
    if isinstance(error, NotFound):
        return "No such member."
    return sentence(getattr(error, "message", str(error)))
