"""Signing in and out."""

from __future__ import annotations

import time

from starlette.responses import Response

from tracebox.accounts import users
from tracebox.store import accounts
from tracebox.ui.links import safe_next
from tracebox.ui.web import Req

MAX_USERNAME = 255
HOME = "/projects"


def home(r: Req) -> Response:
    return r.redirect(HOME if r.user else "/users/sign_in")


def sign_in_form(r: Req) -> Response:
    if r.user is not None:
        return r.redirect(safe_next(r.query("next"), HOME))
    return r.render("auth/sign_in.html", next=r.query("next"), username="", error=None)


def sign_in(r: Req) -> Response:
    username = r.form.text("username")[:MAX_USERNAME]
    password = r.form.get("password")
    target = r.form.get("next")
    address = r.request.client.host if r.request.client else "unknown"
    throttle = r.ctx.throttle

    def again(error: str, status: int) -> Response:
        return r.render("auth/sign_in.html", status, next=target, username=username, error=error)

    wait = throttle.retry_after(username, address)
    if wait:
        minutes = max(1, (wait + 59) // 60)
        return again(f"Too many failed sign-in attempts. Try again in {minutes} minutes.", 429)
    with r.db.read() as conn:
        user = users.check_password(conn, username, password) if username and password else None
        stored = accounts.password_hash(conn, user.id) if user else None
    if user is None or stored is None:
        throttle.failed(username, address)
        return again("Invalid username or password.", 401)
    throttle.succeeded(username)
    r.session.sign_in(user.id, stored, time.time())
    return r.redirect(safe_next(target, HOME))


def sign_out(r: Req) -> Response:
    r.session.sign_out()
    r.flash("notice", "You have been signed out.")
    return r.redirect("/users/sign_in")
