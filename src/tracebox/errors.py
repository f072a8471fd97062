"""One exception hierarchy; each error carries the HTTP status its surface renders.

Ingestion renders ``{"detail": message}`` plus ``X-Sentry-Error``; the REST API renders
``{"message": message}``; the UI renders an HTML page. The classes say what went wrong,
not how it is shown.
"""

from __future__ import annotations


class TraceboxError(Exception):
    status_code = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequest(TraceboxError):
    status_code = 400


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


class NotFound(TraceboxError):
    status_code = 404


class PayloadTooLarge(TraceboxError):
    status_code = 413


class RateLimited(TraceboxError):
    status_code = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Unavailable(TraceboxError):
    """Temporarily unable to accept work (spool full, database down)."""

    status_code = 503

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
