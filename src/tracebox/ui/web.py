"""What every UI handler gets (``Req``) and the wrapper that turns a handler into an
endpoint: session, CSRF check, sign-in, error pages and security headers.

Handlers are plain functions ``(Req, ...) -> Response``; synchronous ones (database work)
run in the thread pool. Errors leave as exceptions; ``exception_handlers`` (the UI's
boundary, mounted by ``app.py``) turns each into an HTML error page (contract 7).
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import jinja2
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.types import ExceptionHandler

from tracebox.accounts import projects as project_access
from tracebox.accounts.policy import Action, Principal, permits
from tracebox.accounts.projects import ProjectAccess
from tracebox.config import Settings
from tracebox.errors import Forbidden, NotFound, TraceboxError, Unauthorized, retry_after
from tracebox.lifecycle import limits
from tracebox.models import Scope, User
from tracebox.store import Database
from tracebox.store import accounts as account_store
from tracebox.tracking import ExternalBackend
from tracebox.ui import render
from tracebox.ui.forms import Form, read_form
from tracebox.ui.sessions import COOKIE_NAME, Session, Signer, expired, fingerprint
from tracebox.ui.throttle import SigninThrottle

log = logging.getLogger("tracebox.ui")
Handler = Callable[..., Response | Awaitable[Response]]
SIGN_IN = "/users/sign_in"


@dataclass
class UiContext:
    settings: Settings
    db: Database
    env: jinja2.Environment
    static: dict[str, render.StaticFile]
    signer: Signer
    throttle: SigninThrottle
    # Called with a revoked client key's public key; app.py wires it to ingestion's key
    # cache, so the DSN stops working at once (ui never imports ingest).
    on_key_deleted: Callable[[str], None]
    # Shared with the API (app.py): one token cipher and one answer cache per process.
    external: ExternalBackend


@dataclass
class Req:
    """One UI request as a handler sees it."""

    ctx: UiContext
    request: Request
    session: Session
    form: Form
    user: User | None

    @property
    def principal(self) -> Principal:
        if self.user is None:
            raise Unauthorized("")
        return Principal(user=self.user, scopes=(Scope.API,))

    @property
    def db(self) -> Database:
        return self.ctx.db

    def query(self, name: str, default: str = "") -> str:
        return self.request.query_params.get(name, default)

    def project(self, ref: str, action: Action) -> ProjectAccess:
        """The project if the user may ``action`` on it (404 / 403 by the policy)."""
        with self.db.read() as conn:
            return project_access.resolve(conn, self.principal, ref, action)

    def render(self, template: str, status: int = 200, **context: Any) -> Response:
        base = {
            "current_user": self.user,
            "csrf_token": self.ctx.signer.csrf_token(self.session),
            "flashes": self.session.pop_flashes(),
            "path": self.request.url.path,
            "query_string": self.request.url.query,
            "now": time.time(),
            "can": can,
            # The spike protection banner of project pages (base.html); asked only there.
            "spike_refusals": lambda project_id: limits.spike_refusals(self.db, project_id),
        }
        return render.render(self.ctx.env, template, status, {**base, **context})

    def redirect(self, url: str) -> Response:
        return RedirectResponse(url, status_code=303)

    def flash(self, kind: str, text: str) -> None:
        self.session.flash(kind, text)


def sentence(message: str) -> str:
    """``name is invalid`` -> ``Name is invalid.``, for a form's error box."""
    text = message.strip() or "The form could not be saved"
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")


def can(access: ProjectAccess, action: str) -> bool:
    """The policy's answer, for templates: they show only the controls a user may use
    (the handlers still authorize every request)."""
    return permits(access.project, access.level, Action(action))


def endpoint(ctx: UiContext, handler: Handler, *, public: bool = False) -> Any:
    """Wrap ``handler(req, **path_params)`` as a Starlette endpoint."""

    async def run(request: Request) -> Response:
        session = ctx.signer.loads(request.cookies.get(COOKIE_NAME))
        request.state.session = session  # for the error page (exception_handlers)
        response = await _dispatch(ctx, handler, request, session, public)
        _save(ctx, request, session, response)
        return render.secure(response)

    return run


async def _dispatch(
    ctx: UiContext, handler: Handler, request: Request, session: Session, public: bool
) -> Response:
    form = Form()
    if request.method == "POST":
        form = await read_form(request, ctx.settings.max_form_bytes)
        token = form.get("_csrf") or request.headers.get("x-csrf-token")
        if not ctx.signer.csrf_valid(session, token):
            raise Forbidden("The form has expired. Go back, reload the page and try again.")
    user = await run_in_threadpool(current_user, ctx, session)
    request.state.user = user  # for the error page's header
    if user is None and not public:
        return _to_sign_in(request)
    req = Req(ctx, request, session, form, user)
    params = dict(request.path_params)
    if inspect.iscoroutinefunction(handler):
        result: Response = await handler(req, **params)
        return result
    return await run_in_threadpool(handler, req, **params)  # type: ignore[arg-type]


def current_user(ctx: UiContext, session: Session) -> User | None:
    """The signed-in user, unless blocked, their password changed, or the session aged."""
    if session.user_id is None:
        return None
    with ctx.db.read() as conn:
        user = account_store.get(conn, session.user_id)
        stored = account_store.password_hash(conn, session.user_id) if user else None
    valid = (
        user is not None
        and not user.is_blocked
        and stored is not None
        and fingerprint(stored) == session.password_fingerprint
        and not expired(session, ctx.settings)
    )
    if not valid:
        session.sign_out()
        return None
    return user


def _to_sign_in(request: Request) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    if request.method != "GET":
        target = "/"
    return RedirectResponse(f"{SIGN_IN}?next={quote(target, safe='/')}", status_code=303)


def _save(ctx: UiContext, request: Request, session: Session, response: Response) -> None:
    if not session.changed and request.cookies.get(COOKIE_NAME):
        return
    response.set_cookie(
        COOKIE_NAME,
        ctx.signer.dumps(session),
        max_age=int(ctx.settings.session_lifetime_hours * 3600),
        path="/",
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )


ERROR_TITLES = {
    400: "Bad request",
    403: "Access denied",
    404: "Page not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Too large",
    429: "Too many requests",
    500: "Something went wrong",
    503: "Temporarily unavailable",
}
NOT_FOUND = "The page could not be found, or you do not have permission to see it."
UNEXPECTED = "Something went wrong on our side. Try again; if it persists, tell your administrator."


def exception_handlers(ctx: UiContext) -> dict[Any, ExceptionHandler]:
    """The UI's error boundary: every failure becomes an HTML page with the UI's
    security headers (contract 7); only unexpected ones are logged."""

    async def known(request: Request, e: Exception) -> Response:
        assert isinstance(e, TraceboxError)
        return error_page(ctx, request, e)

    async def http(request: Request, e: Exception) -> Response:
        assert isinstance(e, HTTPException)
        error = NotFound("") if e.status_code == 404 else TraceboxError(e.detail)
        error.status_code = e.status_code
        return error_page(ctx, request, error)

    async def unexpected(request: Request, e: Exception) -> Response:
        log.exception("unexpected error in the web UI", exc_info=e)
        return error_page(ctx, request, TraceboxError(UNEXPECTED))

    return {TraceboxError: known, HTTPException: http, Exception: unexpected}


def error_page(ctx: UiContext, request: Request, error: TraceboxError) -> Response:
    if isinstance(error, Unauthorized):
        return _to_sign_in(request)
    session = getattr(request.state, "session", None) or ctx.signer.loads(
        request.cookies.get(COOKIE_NAME)
    )
    status = error.status_code
    message = error.message
    if isinstance(error, NotFound):
        # Never say which part was missing: a private project looks like no project.
        message = NOT_FOUND
    elif isinstance(error, Forbidden) and not message:
        message = "You do not have permission to do this."
    req = Req(ctx, request, session, Form(), getattr(request.state, "user", None))
    response = req.render(
        "error.html",
        status,
        title=ERROR_TITLES.get(status) or _phrase(status),
        code=status,
        message=message,
    )
    wait = retry_after(error)
    if wait is not None:
        response.headers["Retry-After"] = str(wait)
    _save(ctx, request, session, response)
    return response


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"
