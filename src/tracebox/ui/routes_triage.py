"""Triage actions from the list and details pages: assign, review, comment, bulk."""

from __future__ import annotations

from starlette.responses import Response

from tracebox.accounts.policy import Action
from tracebox.errors import BadRequest, InvalidParameter
from tracebox.models import ErrorStatus
from tracebox.search import Filter
from tracebox.tracking import ErrorSource
from tracebox.tracking.assignees import actor
from tracebox.tracking.assignees import find as find_assignee
from tracebox.tracking.issue_links import checked_url
from tracebox.tracking.models import ErrorChange, Keep, StatusChange, UserRef
from tracebox.tracking.queries import parse_query
from tracebox.ui.links import error_url, errors_url, safe_next
from tracebox.ui.render import is_htmx
from tracebox.ui.routes_errors import tracking_source
from tracebox.ui.web import Req

BULK = {
    "resolve": ErrorChange(status=StatusChange(ErrorStatus.RESOLVED)),
    "ignore": ErrorChange(status=StatusChange(ErrorStatus.IGNORED)),
    "unresolve": ErrorChange(status=StatusChange(ErrorStatus.UNRESOLVED)),
    "review": ErrorChange(reviewed=True),
}


def _back(r: Req, default: str) -> Response:
    return r.redirect(safe_next(r.form.get("next"), default))


def _assignee(r: Req, project_id: int) -> UserRef | Keep | None:
    """``assignee``: ``me``, a user id, or empty (unassign)."""
    value = r.form.text("assignee")
    if not value:
        return None
    if value == "me":
        return find_assignee(r.db, project_id, user_id=r.principal.user.id)
    if not (value.isascii() and value.isdigit()) or len(value) > 18:
        raise BadRequest("assignee is invalid")
    return find_assignee(r.db, project_id, user_id=int(value))


def assign(r: Req, project: str, error_id: int) -> Response:
    access = r.project(project, Action.UPDATE_ERROR)
    source = tracking_source(r, access)
    change = ErrorChange(assignee=_assignee(r, access.project.id))
    summary = source.update(error_id, change, actor(r.principal.user))
    if not is_htmx(r.request):
        who = summary.assignee.username if summary.assignee else "nobody"
        r.flash("notice", f"The error is assigned to {who}.")
    return _back(r, error_url(access.project.path, error_id))


def link_issue(r: Req, project: str, error_id: int) -> Response:
    """Link the error to an issue by URL (any tracker); an empty URL unlinks it."""
    access = r.project(project, Action.UPDATE_ERROR)
    url = checked_url(r.form.text("url"))
    tracking_source(r, access).link_issue(error_id, url, actor(r.principal.user))
    r.flash("notice", "The issue was linked." if url else "The issue was unlinked.")
    return r.redirect(error_url(access.project.path, error_id))


def review(r: Req, project: str, error_id: int) -> Response:
    access = r.project(project, Action.UPDATE_ERROR)
    source = tracking_source(r, access)
    source.update(error_id, ErrorChange(reviewed=True), actor(r.principal.user))
    return _back(r, error_url(access.project.path, error_id))


def bulk(r: Req, project: str) -> Response:
    """The list's bulk bar: the selected errors, or all matching the search."""
    access = r.project(project, Action.UPDATE_ERROR)
    source = tracking_source(r, access)
    action = r.form.get("action")
    back = errors_url(access.project.path)
    ids: list[int] | None = _ids(r)
    if action == "merge":
        return _merge(r, access.project.path, source, ids or [])
    if action == "assign":
        change = ErrorChange(assignee=_assignee(r, access.project.id))
    elif action in BULK:
        change = BULK[action]
    else:
        raise BadRequest("action is invalid")
    query = None
    if r.form.checked("all"):
        ids, query = None, parse_query(r.ctx.settings, r.form.get("query"))
        if r.form.text("environment"):
            query = query.plus(Filter("environment", r.form.text("environment")))
    elif not ids:
        r.flash("alert", "Select errors first, or tick “All errors matching this search”.")
        return _back(r, back)
    settings = r.ctx.settings
    try:
        result = source.bulk_update(
            ids=ids,
            query=query,
            change=change,
            actor=actor(r.principal.user),
            viewer=r.principal.user.id,
            max_errors=settings.bulk_max_errors,
            batch_size=settings.bulk_batch_errors,
        )
    except InvalidParameter as e:
        r.flash("alert", e.message[0].upper() + e.message[1:] + ".")
        return _back(r, back)
    r.flash("notice", f"{result.changed} error{'' if result.changed == 1 else 's'} changed.")
    return _back(r, back)


def _merge(r: Req, path: str, source: ErrorSource, ids: list[int]) -> Response:
    """Merge the selected errors (a selection, never "all matching")."""
    if len(ids) < 2:
        r.flash("alert", "Select at least two errors to merge.")
        return _back(r, errors_url(path))
    settings = r.ctx.settings
    merged = source.merge(
        ids,
        actor(r.principal.user),
        max_errors=settings.bulk_max_errors,
        batch_size=settings.bulk_batch_errors,
    )
    r.flash("notice", f"{len(ids)} errors were merged into this one.")
    return r.redirect(error_url(path, merged))


def unmerge(r: Req, project: str, error_id: int) -> Response:
    access = r.project(project, Action.UPDATE_ERROR)
    fingerprint = r.form.text("grouping_hash")
    if len(fingerprint) != 32 or not all(c in "0123456789abcdef" for c in fingerprint):
        raise BadRequest("grouping_hash is invalid")
    source = tracking_source(r, access)
    new_id = source.unmerge(error_id, fingerprint, actor(r.principal.user))
    r.flash("notice", "The fingerprint was unmerged into this new error.")
    return r.redirect(error_url(access.project.path, new_id))


def _ids(r: Req) -> list[int]:
    found = []
    for value in r.form.all("ids"):
        if not (value.isascii() and value.isdigit()) or len(value) > 18:
            raise BadRequest("ids is invalid")
        found.append(int(value))
    return found


def add_comment(r: Req, project: str, error_id: int) -> Response:
    access = r.project(project, Action.COMMENT)
    text = _comment_text(r)
    source = tracking_source(r, access)
    note = source.add_comment(error_id, actor(r.principal.user), text)
    return r.redirect(error_url(access.project.path, error_id) + f"#comment-{note.id}")


def edit_comment(r: Req, project: str, error_id: int, comment_id: int) -> Response:
    access = r.project(project, Action.COMMENT)
    text = _comment_text(r)
    source = tracking_source(r, access)
    source.edit_comment(error_id, comment_id, actor(r.principal.user), text)
    return r.redirect(error_url(access.project.path, error_id) + f"#comment-{comment_id}")


def delete_comment(r: Req, project: str, error_id: int, comment_id: int) -> Response:
    access = r.project(project, Action.DELETE_COMMENT)
    source = tracking_source(r, access)
    source.delete_comment(error_id, comment_id)
    r.flash("notice", "The comment was deleted.")
    return r.redirect(error_url(access.project.path, error_id) + "#activity")


def _comment_text(r: Req) -> str:
    text = r.form.get("body").replace("\r\n", "\n").strip()
    limit = r.ctx.settings.comment_max_chars
    if "\x00" in text or not text:
        raise BadRequest("body is invalid: write a comment")
    if len(text) > limit:
        raise BadRequest(f"body is too long: at most {limit} characters")
    return text
