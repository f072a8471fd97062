"""Usage, storage settings (retention, deletions), deleting an error, audit events, and
the admin's storage page."""

from __future__ import annotations

from starlette.responses import Response

from tracebox.accounts.policy import Action, require_admin
from tracebox.accounts.projects import ProjectAccess
from tracebox.errors import BadRequest, NotFound
from tracebox.lifecycle import deletion as deletions
from tracebox.lifecycle import limits, report
from tracebox.lifecycle import retention as lifecycle_retention
from tracebox.lifecycle.deletion import UserField, user_target
from tracebox.store import audit, client_keys, deletion, errors_read, quotas
from tracebox.store.audit import Author
from tracebox.store.deletion import DeletionJob, JobKind
from tracebox.store.quotas import CATEGORIES, WINDOWS, Quota, SpikeProtection
from tracebox.tracking.models import Bucket
from tracebox.ui import charts
from tracebox.ui.links import project_url
from tracebox.ui.web import Req, sentence

MAX_DAYS = 3650  # as the API's bound
MAX_QUOTA = 10**12  # as the API's bound
MAX_SPIKE_MULTIPLIER = 1000  # as the API's bound
MAX_QUOTA_ROWS = 50  # as the API's bound
EMPTY_QUOTA_ROWS = 3  # blank rows the form offers for new quotas
MAX_KEYS = 100
MAX_EVENTS_PER_ERROR = 1_000_000
AUDIT_PER_PAGE = 50
JOBS_SHOWN = 10


def _author(r: Req) -> Author:
    return Author(r.principal.user.id, r.principal.user.username)


def usage(r: Req, project: str) -> Response:
    access = r.project(project, Action.READ_ERRORS)
    found = report.project(r.db, r.ctx.settings, access.project.id)
    days = [Bucket(d.day, d.accepted) for d in found.daily]
    return r.render(
        "usage.html",
        access=access,
        usage=found,
        chart=charts.bar_chart(days, width=600, height=80, daily=True, gap=2),
    )


def storage_settings(r: Req, project: str, error: str | None = None, status: int = 200) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    found = report.project(r.db, r.ctx.settings, access.project.id)
    with r.db.read() as conn:
        jobs = deletion.list_for_project(conn, access.project.id, JOBS_SHOWN)
        saved = quotas.get(conn, access.project.id)
        keys = client_keys.list_for_project(conn, access.project.id, limit=MAX_KEYS)
    rows = list(saved.quotas) + [None] * EMPTY_QUOTA_ROWS
    return r.render(
        "settings/storage.html",
        status,
        access=access,
        usage=found,
        defaults=r.ctx.settings,
        jobs=jobs,
        error=error,
        fields=UserField,
        limits=saved,
        quota_rows=rows,
        keys=keys,
        categories=CATEGORIES,
        windows=WINDOWS,
    )


def save_quotas(r: Req, project: str) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    try:
        found = [q for i in range(MAX_QUOTA_ROWS) if (q := _quota_row(r, i)) is not None]
        spike = SpikeProtection(r.form.checked("spike_enabled"), _multiplier(r))
        limits.save(r.db, access.project, _author(r), found, spike)
    except BadRequest as e:
        return storage_settings(r, project, sentence(e.message), 400)
    r.flash("notice", "Quotas saved; ingestion applies them within seconds.")
    return r.redirect(_storage_url(access) + "#quotas")


def _quota_row(r: Req, i: int) -> Quota | None:
    count = r.form.text(f"max_count_{i}")
    if not count:
        return None
    category, window = r.form.get(f"category_{i}", ""), r.form.get(f"window_{i}", "")
    key = r.form.get(f"key_{i}", "")
    if category not in CATEGORIES or not window.isdigit() or int(window) not in WINDOWS:
        raise BadRequest(f"quota {i + 1}: choose a data category and a window")
    if not count.isdigit() or int(count) > MAX_QUOTA or (key and not key.isdigit()):
        raise BadRequest(f"quota {i + 1}: the limit must be a whole number up to {MAX_QUOTA:,}")
    return Quota(category, int(window), int(count), int(key) if key else None)


def _multiplier(r: Req) -> float:
    text = r.form.text("spike_multiplier") or "10"
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 2 <= value <= MAX_SPIKE_MULTIPLIER:
        raise BadRequest(f"the spike multiplier must be from 2 to {MAX_SPIKE_MULTIPLIER}")
    return value


def save_retention(r: Req, project: str) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    try:
        days = _optional_int(r.form.text("max_age_days"), "Maximum age", MAX_DAYS)
        per_error = _optional_int(
            r.form.text("max_events_per_error"), "Events kept per error", MAX_EVENTS_PER_ERROR
        )
    except BadRequest as e:
        return storage_settings(r, project, sentence(e.message), 400)
    lifecycle_retention.save(
        r.db, access.project, _author(r), max_age_days=days, max_events_per_error=per_error
    )
    r.flash("notice", "Retention saved; the next cleanup pass applies it.")
    return r.redirect(_storage_url(access))


def _optional_int(text: str, label: str, maximum: int) -> int | None:
    if not text:
        return None
    if not text.isdigit() or not 1 <= int(text) <= maximum:
        raise BadRequest(f"{label} must be a whole number from 1 to {maximum:,}, or empty")
    return int(text)


def delete_user(r: Req, project: str) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    try:
        field = UserField(r.form.get("field", ""))
        target = user_target(field, r.form.text("value"))
    except (ValueError, BadRequest) as e:
        message = e.message if isinstance(e, BadRequest) else "choose id, email or IP address"
        return storage_settings(r, project, sentence(message), 400)
    job = deletions.delete(r.db, r.ctx.settings, access.project, JobKind.USER, target, _author(r))
    r.flash("notice", _job_sentence(job, "the user's events"))
    return r.redirect(_storage_url(access) + "#deletions")


def erase_data(r: Req, project: str) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    if r.form.text("confirm") != access.project.path:
        message = f"Type {access.project.path} to confirm erasing every error and event."
        return storage_settings(r, project, message, 400)
    job = deletions.delete(r.db, r.ctx.settings, access.project, JobKind.PROJECT, "", _author(r))
    r.flash("notice", _job_sentence(job, "every error, event and session"))
    return r.redirect(_storage_url(access) + "#deletions")


def delete_error(r: Req, project: str, error_id: int) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    with r.db.read() as conn:
        found = errors_read.get_error(conn, access.project.id, error_id)
    if found is None:
        raise NotFound("Error")
    job = deletions.delete(
        r.db,
        r.ctx.settings,
        access.project,
        JobKind.ERROR,
        str(error_id),
        _author(r),
        title=found.title,
        events_count=found.events_count,
    )
    r.flash("notice", _job_sentence(job, f"error #{error_id} and its events"))
    return r.redirect(project_url(access.project.path, "error_tracking"))


def _job_sentence(job: DeletionJob, what: str) -> str:
    if job.state.value == "done":
        return f"Deleted {what}: {job.events_deleted:,} events."
    return f"Deleting {what}: {job.events_deleted:,} events so far; the rest within a minute."


def _storage_url(access: ProjectAccess) -> str:
    return project_url(access.project.path, "settings/storage")


def project_audit(r: Req, project: str) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    return _audit_page(r, access)


def admin_audit(r: Req) -> Response:
    require_admin(r.principal)
    return _audit_page(r, None)


def _audit_page(r: Req, access: ProjectAccess | None) -> Response:
    raw = r.query("before")
    before = int(raw) if raw.isdigit() and len(raw) < 19 else None
    with r.db.read() as conn:
        found = audit.list_page(
            conn,
            project_id=access.project.id if access else None,
            before_id=before,
            limit=AUDIT_PER_PAGE + 1,
        )
    more = len(found) > AUDIT_PER_PAGE
    found = found[:AUDIT_PER_PAGE]
    older = found[-1].id if more else None
    if access is None:
        return r.render("admin/audit.html", events=found, older=older)
    return r.render("audit.html", access=access, events=found, older=older)


def admin_storage(r: Req) -> Response:
    require_admin(r.principal)
    found = report.instance(r.db, r.ctx.settings)
    return r.render("admin/storage.html", storage=found)
