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
    auth, size, json, redirect, refused_address, shape."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind
