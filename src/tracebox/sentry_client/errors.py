"""Failures talking to an external Sentry server, with messages that name the cause."""

from __future__ import annotations

from tracebox.errors import BadRequest

TOKEN_REFUSED = (
    "Sentry refused the auth token (HTTP {status}). Check the token and that it has the "
    "scopes project:read, event:read and event:write"
)


class SentryError(BadRequest):
    """Rendered as ``{"message": ...}`` with status 400, as GitLab's Sentry services do.
    ``kind`` is a stable word for tests and logs: dns, connect, timeout, tls, status,
    auth, size, json, redirect, refused_address, shape. ``upstream_status`` is the HTTP
    status Sentry answered with, when it answered (a 404 there means "no such issue")."""

    def __init__(self, message: str, kind: str, *, upstream_status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.upstream_status = upstream_status
