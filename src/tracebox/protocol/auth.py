"""Client credentials: the ``X-Sentry-Auth`` / ``Authorization: Sentry`` header, the
``sentry_*`` query parameters and the envelope ``dsn`` header (reference section 2)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from tracebox.errors import BadRequest, Unauthorized
from tracebox.protocol.dsn import parse_dsn

PROTOCOL_VERSION = 7  # newest protocol we speak; higher is refused, as Relay


@dataclass(frozen=True)
class SentryAuth:
    public_key: str
    secret_key: str | None
    version: int | None
    client: str | None


def parse_auth_header(value: str) -> SentryAuth | None:
    """Read ``Sentry k=v, k=v`` (prefix case-insensitive, spaces after commas optional,
    unknown keys such as ``sentry_timestamp`` ignored). ``None`` when the value is not a
    Sentry auth header at all; ``Unauthorized`` when it is one without a key; a bad or too
    new ``sentry_version`` raises as in ``_make``."""
    if len(value) <= CACHED_HEADER_CHARS:
        return _parse_auth_header_cached(value)
    return _parse_auth_header(value)


# An SDK sends the same header with every request: parsing it took ~5 us of each
# (issue 10). The cache is bounded: 256 values of at most 512 characters; errors are
# not cached (they raise).
CACHED_HEADER_CHARS = 512


def _parse_auth_header(value: str) -> SentryAuth | None:
    words = value.split(None, 1)
    if not words or words[0].lower() != "sentry":
        return None
    rest = words[1] if len(words) > 1 else ""
    fields: dict[str, str] = {}
    for param in rest.split(","):
        name, sep, field = param.partition("=")
        if sep:
            fields[name.strip()] = field.strip()
    return _make(fields, "auth header")


_parse_auth_header_cached = functools.lru_cache(maxsize=256)(_parse_auth_header)


def auth_from_request(headers: Mapping[str, str], query: Mapping[str, str]) -> SentryAuth | None:
    """The credentials of a request, from any of its headers and its query string.

    Header names are matched case-insensitively whatever the mapping. Relay refuses a
    request carrying several credentials; we accept them when they agree (PHP and Ruby send
    a header and an envelope ``dsn``), and raise ``Unauthorized`` when they do not.
    ``None`` when the request carries no credentials.
    """
    found: list[SentryAuth] = []
    for name, value in headers.items():
        if name.lower() in ("x-sentry-auth", "authorization"):
            auth = parse_auth_header(value)
            if auth is not None:
                found.append(auth)
    if "sentry_key" in query:
        found.append(_make(query, "query string"))
    return merge_auth(found)


def auth_from_envelope_dsn(dsn: str) -> tuple[SentryAuth, str]:
    """Credentials and project id from an envelope's ``dsn`` header; a malformed DSN is
    ``Unauthorized`` (Relay's BadEnvelopeAuth is a 401)."""
    try:
        parsed = parse_dsn(dsn)
    except BadRequest as e:
        raise Unauthorized(f"invalid dsn in envelope header: {e.message}") from e
    return SentryAuth(parsed.public_key, parsed.secret_key, None, None), parsed.project_id


def merge_auth(found: list[SentryAuth]) -> SentryAuth | None:
    """One credential from several that must name the same key; a secret sent by one and
    not the others is kept. ``Unauthorized`` when they disagree."""
    if len(found) < 2:
        return found[0] if found else None
    first = found[0]
    secret = first.secret_key
    for other in found[1:]:
        if other.public_key != first.public_key:
            raise Unauthorized("multiple authorization payloads disagree on the public key")
        if secret and other.secret_key and other.secret_key != secret:
            raise Unauthorized("multiple authorization payloads disagree on the secret key")
        secret = secret or other.secret_key
    version = next((a.version for a in found if a.version is not None), None)
    client = next((a.client for a in found if a.client), None)
    return SentryAuth(first.public_key, secret, version, client)


def _make(fields: Mapping[str, str], where: str) -> SentryAuth:
    key = fields.get("sentry_key", "").strip()
    if not key:
        raise Unauthorized(f"missing sentry_key in {where}")
    return SentryAuth(
        public_key=key,
        secret_key=fields.get("sentry_secret", "").strip() or None,
        version=_version(fields.get("sentry_version"), where),
        client=fields.get("sentry_client", "").strip() or None,
    )


def _version(value: str | None, where: str) -> int | None:
    """The integer before the first dot, as Relay reads ``sentry_version``."""
    if value is None or not value.strip():
        return None
    head = value.strip().split(".", 1)[0]
    if not (head.isascii() and head.isdigit()):
        raise Unauthorized(f"invalid sentry_version in {where}")
    version = int(head)
    if version > PROTOCOL_VERSION:
        raise BadRequest("unsupported protocol version")
    return version
