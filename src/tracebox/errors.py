"""One exception hierarchy; each error carries the HTTP status its surface renders.

Each surface has one boundary that renders these (ARCHITECTURE contract 7): ingestion
``{"detail": message}`` plus ``X-Sentry-Error`` (``ingest.routes.error_response``); the
REST API ``{"message": ...}`` or ``{"error": ...}`` as GitLab (``api.problems``); the UI
an HTML page (``ui.web.error_page``). The classes say what went wrong, not how it is
shown; code raises them and never builds an error response by hand.
"""

from __future__ import annotations

DEFAULT_RETRY_AFTER_SECONDS = 30  # when the raiser has no better estimate


class TraceboxError(Exception):
    status_code = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequest(TraceboxError):
    status_code = 400


class InvalidParameter(BadRequest):
    """A missing or malformed request parameter; REST renders GitLab's
    ``{"error": "<field> is missing"}``. The message starts with the field name."""


class InvalidJson(BadRequest):
    """A body or payload that should be JSON (an object) is not."""


class MalformedEnvelope(BadRequest):
    """Envelope framing does not follow the grammar."""


class BadEncoding(BadRequest):
    """A compressed body could not be decoded."""


class Unauthorized(TraceboxError):
    status_code = 401


class Forbidden(TraceboxError):
    status_code = 403


class InsufficientScope(Forbidden):
    """A token without the scope the request needs (``read_api`` on a write)."""

    def __init__(self, required: str) -> None:
        super().__init__("insufficient_scope")
        self.required = required


class NotFound(TraceboxError):
    status_code = 404


class MethodNotAllowed(TraceboxError):
    status_code = 405


class Conflict(TraceboxError):
    """The resource already exists (a member, a username, a project path)."""

    status_code = 409


class PayloadTooLarge(TraceboxError):
    status_code = 413


class RateLimited(TraceboxError):
    status_code = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Unavailable(TraceboxError):
    """Temporarily unable to do the work (spool full, database down or too slow)."""

    status_code = 503

    def __init__(self, message: str, retry_after: int = DEFAULT_RETRY_AFTER_SECONDS) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class QueryTimeout(Unavailable):
    """A database query ran past ``TRACEBOX_QUERY_TIMEOUT_MS`` and was cancelled."""


def retry_after(error: TraceboxError) -> int | None:
    """Seconds a client should wait before trying again (429 and 503 only)."""
    if isinstance(error, RateLimited | Unavailable):
        return error.retry_after
    return None
