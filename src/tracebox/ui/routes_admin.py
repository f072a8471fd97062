"""Admin area: users list, create, block and unblock (admins only)."""

from __future__ import annotations

from starlette.responses import Response

from tracebox.accounts import users
from tracebox.accounts.policy import require_admin
from tracebox.errors import Conflict, InvalidParameter
from tracebox.store import accounts
from tracebox.ui.web import Req, sentence

PAGE = "/admin/users"
PER_PAGE = 100


def index(r: Req) -> Response:
    require_admin(r.principal)
    raw = r.query("page", "1")
    page = int(raw) if raw.isdigit() and 0 < int(raw) < 1_000_000 else 1
    with r.db.read() as conn:
        total = accounts.count(conn)
        found = accounts.list_page(conn, offset=(page - 1) * PER_PAGE, limit=PER_PAGE)
    pages = max(1, (total + PER_PAGE - 1) // PER_PAGE)
    return r.render("admin/users.html", users=found, total=total, page=page, pages=pages)


def new_form(r: Req) -> Response:
    require_admin(r.principal)
    return r.render("admin/new_user.html", values={}, error=None)


def create(r: Req) -> Response:
    require_admin(r.principal)
    values = {k: r.form.text(k) for k in ("username", "email", "name")}
    admin = r.form.checked("admin")
    try:
        with r.db.write() as conn:
            user = users.create_user(
                conn, **values, password=r.form.get("password"), is_admin=admin
            )
    except (InvalidParameter, Conflict) as e:
        values["admin"] = "1" if admin else ""
        return r.render("admin/new_user.html", 400, values=values, error=sentence(e.message))
    r.flash("notice", f"User {user.username} was created.")
    return r.redirect(PAGE)


def block(r: Req, user_id: int) -> Response:
    return _set_blocked(r, user_id, True)


def unblock(r: Req, user_id: int) -> Response:
    return _set_blocked(r, user_id, False)


def _set_blocked(r: Req, user_id: int, blocked: bool) -> Response:
    require_admin(r.principal)
    try:
        with r.db.write() as conn:
            user = users.set_blocked(conn, user_id, blocked, acting_user_id=r.principal.user.id)
    except InvalidParameter as e:
        r.flash("alert", sentence(e.message))
        return r.redirect(PAGE)
    r.flash("notice", f"User {user.username} was {'blocked' if blocked else 'unblocked'}.")
    return r.redirect(PAGE)
