"""Linking a project to an external Sentry server: validating the connection form and
listing the server's projects (the Connect button of the settings page).

The client for an external Sentry server's web API arrives with the external backend
(its own issue). Until then ``list_projects`` validates its input and then fails
honestly, and the UI shows "Connection failed. Check auth token and try again".
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from tracebox.accounts.errors import InvalidParameter
from tracebox.errors import BadRequest

MAX_URL_LENGTH = 2048
MAX_TOKEN_LENGTH = 512  # Sentry auth tokens are 64 hex or ~100 characters (sntrys_ ...)
NOT_AVAILABLE = "the external Sentry backend is not available in this version"


@dataclass(frozen=True)
class ExternalProject:
    id: str
    slug: str
    name: str
    organization_slug: str
    organization_name: str


def validate_api_url(api_url: str) -> str:
    """The external Sentry's base URL, ``https://<host>`` (http allowed for a local one)."""
    url = api_url.strip().rstrip("/")
    if not url:
        raise InvalidParameter("api_url is missing")
    parts = urlsplit(url) if len(url) <= MAX_URL_LENGTH and "\x00" not in url else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidParameter("api_url must be an http or https URL")
    return url


def validate_token(token: str) -> str:
    token = token.strip()
    if not token:
        raise InvalidParameter("token is missing")
    if len(token) > MAX_TOKEN_LENGTH or not token.isprintable() or " " in token:
        raise InvalidParameter("token is invalid")
    return token


def list_projects(api_url: str, token: str) -> list[ExternalProject]:
    """The projects the token can read on the external server (400 on bad input)."""
    validate_api_url(api_url)
    validate_token(token)
    raise BadRequest(NOT_AVAILABLE)
