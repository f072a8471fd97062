"""User settings > Access tokens: create (the token is shown once), list, revoke."""

from __future__ import annotations

import datetime as dt
import time

from starlette.responses import Response

from tracebox.accounts import personal_tokens
from tracebox.accounts.tokens import MAX_LIFETIME_DAYS, expiry_date
from tracebox.errors import InvalidParameter, NotFound
from tracebox.models import Scope
from tracebox.store import tokens
from tracebox.ui.web import Req, sentence

PAGE = "/-/user_settings/personal_access_tokens"
MAX_TOKENS_SHOWN = 200


def _render(r: Req, status: int = 200, **extra: object) -> Response:
    today = dt.datetime.now(dt.UTC).date()
    with r.db.read() as conn:
        found = tokens.list_page(
            conn, user_id=r.principal.user.id, offset=0, limit=MAX_TOKENS_SHOWN
        )
    values = {"name": "", "scopes": [Scope.API.value], "expires_at": ""}
    context: dict[str, object] = {
        "tokens": list(reversed(found)),
        "scopes": list(Scope),
        "today": today.isoformat(),
        "default_expiry": (today + dt.timedelta(days=MAX_LIFETIME_DAYS)).isoformat(),
        "expiry_date": expiry_date,
        "now_ts": time.time(),
        "values": values,
        "error": None,
        "created": None,
    }
    context.update(extra)
    return r.render("tokens.html", status, **context)


def index(r: Req) -> Response:
    return _render(r)


def create(r: Req) -> Response:
    name, scopes, expires_at = r.form.text("name"), r.form.all("scopes"), r.form.text("expires_at")
    values = {"name": name, "scopes": scopes, "expires_at": expires_at}
    try:
        expires = _date(expires_at)
        with r.db.write() as conn:
            token, secret = personal_tokens.issue(
                conn, r.principal.user.id, name=name, scopes=scopes, expires_on=expires
            )
    except InvalidParameter as e:
        return _render(r, 400, values=values, error=sentence(e.message))
    # Rendered, not redirected: the secret is never stored, so this is the only time it is seen.
    return _render(r, 201, created=(token, secret))


def revoke(r: Req, token_id: int) -> Response:
    with r.db.write() as conn:
        try:
            personal_tokens.revoke(conn, r.principal, token_id)
        except NotFound:
            r.flash("alert", "No such token.")
            return r.redirect(PAGE)
    r.flash("notice", "The token was revoked.")
    return r.redirect(PAGE)


def _date(text: str) -> dt.date | None:
    if not text:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError as e:
        raise InvalidParameter("expires_at is not a date (YYYY-MM-DD)") from e
