"""A client for an external Sentry server's web API (reference section 10), as GitLab's.

``SentryClient`` sends ``Authorization: Bearer <token>``, never follows redirects, bounds
every request (connect and read timeouts, a streamed response size cap) and refuses
addresses outside the public internet unless the local network is allowed
(``safety``). Every failure is a ``SentryError`` whose message names the cause.

The client (and httpx, ~8 MB) is imported on first use of a name that needs it: the
background process imports this package for ``SentryError`` and ``safety`` only (alert
delivery), and most servers never link a Sentry server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracebox import lazy
from tracebox.sentry_client.errors import SentryError

if TYPE_CHECKING:
    from tracebox.sentry_client.client import SentryClient, SentryResponse
    from tracebox.sentry_client.options import ClientOptions
    from tracebox.sentry_client.pagination import Links, parse_link_header

__getattr__ = lazy.exports(
    __name__,
    {
        "ClientOptions": "options",
        "SentryClient": "client",
        "SentryResponse": "client",
        "Links": "pagination",
        "parse_link_header": "pagination",
    },
)

__all__ = [
    "ClientOptions",
    "Links",
    "SentryClient",
    "SentryError",
    "SentryResponse",
    "parse_link_header",
]
