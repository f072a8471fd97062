"""Error responses: GitLab's shapes on /api/v4, Sentry's on /api/0 (ARCHITECTURE contract 7).

GitLab: ``{"message": "404 Project Not Found"}``, ``{"message": "401 Unauthorized"}``,
``{"message": "403 Forbidden"}``, parameter errors ``{"error": "active is missing"}``, a
``read_api`` token on a write ``{"error": "insufficient_scope", ...}``.
Sentry: ``{"detail": "..."}``.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.responses import Response

from tracebox.errors import (
    BadRequest,
    Conflict,
    Forbidden,
    InsufficientScope,
    InvalidParameter,
    NotFound,
    TraceboxError,
    Unauthorized,
    retry_after,
)

log = logging.getLogger("tracebox.api")

SCOPE_DESCRIPTION = "The request requires higher privileges than provided by the access token."


class Problem(BaseModel):
    """Every error body of /api/v4: ``message``, or ``error`` (GitLab's two shapes)."""

    message: str | None = None
    error: str | None = None
    error_description: str | None = None
    scope: str | None = None


PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": Problem, "description": text}
    for status, text in (
        (400, "A parameter is missing or invalid"),
        (401, "No valid token"),
        (403, "Forbidden, or insufficient_scope"),
        (404, "Not found, or not visible to you"),
    )
}

CONFLICT_RESPONSE: dict[int | str, dict[str, Any]] = {
    409: {"model": Problem, "description": "Already exists"}
}


def gitlab_body(e: TraceboxError) -> dict[str, Any]:
    if isinstance(e, InsufficientScope):
        return {"error": e.message, "error_description": SCOPE_DESCRIPTION, "scope": e.required}
    if isinstance(e, InvalidParameter):
        return {"error": e.message}
    if isinstance(e, Unauthorized):
        return {"message": "401 Unauthorized"}
    if isinstance(e, Forbidden):
        return {"message": "403 Forbidden" + (f" - {e.message}" if e.message else "")}
    if isinstance(e, NotFound):
        return {"message": f"404 {e.message} Not Found" if e.message else "404 Not Found"}
    if isinstance(e, BadRequest):
        return {"message": f"400 Bad request - {e.message}"}
    if isinstance(e, Conflict):
        return {"message": e.message}
    return {"message": f"{e.status_code} {e.message}"}


SENTRY_DETAILS = {
    401: "Authentication credentials were not provided.",
    403: "You do not have permission to perform this action.",
    404: "The requested resource does not exist",
}


def sentry_body(e: TraceboxError) -> dict[str, Any]:
    return {"detail": SENTRY_DETAILS.get(e.status_code, e.message)}


def _json(body: dict[str, Any], status: int, wait: int | None = None) -> Response:
    headers = {"Retry-After": str(wait)} if wait is not None else None
    return Response(
        orjson.dumps(body), status_code=status, media_type="application/json", headers=headers
    )


def validation_error(e: RequestValidationError) -> InvalidParameter:
    """GitLab names the first bad parameter: ``{"error": "active is missing"}``."""
    first = e.errors()[0] if e.errors() else {}
    loc = [str(part) for part in first.get("loc", ()) if part not in ("body", "query", "path")]
    field = loc[-1] if loc else "body"
    verdict = "is missing" if first.get("type") == "missing" else "is invalid"
    return InvalidParameter(f"{field} {verdict}")


def install(app: FastAPI, render: Any) -> None:
    """Register one renderer for every error this app can raise."""

    async def known(_: Request, e: Exception) -> Response:
        assert isinstance(e, TraceboxError)
        return _json(render(e), e.status_code, retry_after(e))

    async def invalid(_: Request, e: Exception) -> Response:
        assert isinstance(e, RequestValidationError)
        problem = validation_error(e)
        return _json(render(problem), problem.status_code)

    async def http(_: Request, e: Exception) -> Response:
        assert isinstance(e, HTTPException)
        error = TraceboxError(e.detail if isinstance(e.detail, str) else "")
        error.status_code = e.status_code
        body = render(NotFound("")) if e.status_code == 404 else render(error)
        return _json(body, e.status_code)

    async def unexpected(_: Request, e: Exception) -> Response:
        log.exception("unexpected error in the REST API", exc_info=e)
        return _json(render(TraceboxError("Internal Server Error")), 500)

    app.add_exception_handler(TraceboxError, known)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(HTTPException, http)
    # Not add_exception_handler(Exception, ...): Starlette gives that one to its
    # ServerErrorMiddleware, which answers and then re-raises to the server; this
    # boundary answers in the API's shape and ends there, as the other surfaces do.
    app.add_middleware(ExceptionMiddleware, handlers={Exception: unexpected})
