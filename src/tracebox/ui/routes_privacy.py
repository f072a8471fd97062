"""Settings > Privacy (Maintainer+): what is scrubbed from events before they are stored."""

from __future__ import annotations

from starlette.responses import Response

from tracebox.accounts.policy import Action
from tracebox.accounts.projects import ProjectAccess
from tracebox.errors import BadRequest
from tracebox.privacy import IpMode, PrivacySettings
from tracebox.privacy.settings import MAX_FIELD_NAMES, names_from_text
from tracebox.store import privacy as privacy_store
from tracebox.ui.links import project_url
from tracebox.ui.web import Req, sentence

IP_MODES = {
    IpMode.STORE: "Store",
    IpMode.ANONYMIZE: "Anonymise (IPv4: last octet zeroed; IPv6: last 80 bits zeroed)",
    IpMode.DROP: "Do not store",
}


def privacy_form(r: Req, project: str) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    with r.db.read() as conn:
        saved = privacy_store.get(conn, access.project.id)
    return _page(r, access, saved, None)


def save_privacy(r: Req, project: str) -> Response:
    access = r.project(project, Action.ADMIN_ERROR_TRACKING)
    mode = r.form.get("ip_mode", IpMode.STORE.value)
    try:
        if mode not in set(IpMode):
            raise BadRequest("IP addresses: choose one of the options")
        wanted = PrivacySettings(
            scrub_data=r.form.checked("scrub_data"),
            sensitive_fields=names_from_text(
                r.form.get("sensitive_fields"), "Additional sensitive fields"
            ),
            safe_fields=names_from_text(r.form.get("safe_fields"), "Safe fields"),
            ip_mode=IpMode(mode),
            drop_user_ip=r.form.checked("drop_user_ip"),
        )
    except BadRequest as e:
        return _page(r, access, None, sentence(e.message), status=400)
    with r.db.write() as conn:
        privacy_store.put(conn, access.project.id, wanted)
    r.flash("notice", "Privacy settings saved. New events are scrubbed with them.")
    return r.redirect(project_url(access.project.path, "settings/privacy"))


def _page(
    r: Req,
    access: ProjectAccess,
    saved: PrivacySettings | None,
    error: str | None,
    status: int = 200,
) -> Response:
    """The form with the saved settings, or with what was just posted (after an error)."""
    if saved is None:
        values = {
            "scrub_data": r.form.checked("scrub_data"),
            "sensitive_fields": r.form.get("sensitive_fields"),
            "safe_fields": r.form.get("safe_fields"),
            "ip_mode": r.form.get("ip_mode"),
            "drop_user_ip": r.form.checked("drop_user_ip"),
        }
    else:
        values = {
            "scrub_data": saved.scrub_data,
            "sensitive_fields": "\n".join(saved.sensitive_fields),
            "safe_fields": "\n".join(saved.safe_fields),
            "ip_mode": saved.ip_mode.value,
            "drop_user_ip": saved.drop_user_ip,
        }
    return r.render(
        "settings/privacy.html",
        status,
        access=access,
        values=values,
        error=error,
        ip_modes=IP_MODES,
        max_names=MAX_FIELD_NAMES,
    )
