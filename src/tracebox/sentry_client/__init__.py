"""A client for an external Sentry server's web API (reference section 10), as GitLab's.

``SentryClient`` sends ``Authorization: Bearer <token>``, never follows redirects, bounds
every request (connect and read timeouts, a streamed response size cap) and refuses
addresses outside the public internet unless the local network is allowed
(``safety``). Every failure is a ``SentryError`` whose message names the cause.
"""

from tracebox.sentry_client.client import ClientOptions, SentryClient, SentryResponse
from tracebox.sentry_client.errors import SentryError
from tracebox.sentry_client.pagination import Links, parse_link_header

__all__ = [
    "ClientOptions",
    "Links",
    "SentryClient",
    "SentryError",
    "SentryResponse",
    "parse_link_header",
]
