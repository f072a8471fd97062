"""DSNs: ``{scheme}://{public_key}[:{secret_key}]@{host}[:{port}]{path_prefix}/{project_id}``.

Facts from the reference section 1: the project id is the last path segment and
everything before it is a path prefix the SDKs keep; the secret is optional and
deprecated; an empty secret (``key:@host``) means none.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from tracebox.errors import BadRequest

_DEFAULT_PORTS = {"http": 80, "https": 443}

# GitLab's collector path, so a DSN works with both GitLab-style and plain clients.
COLLECTOR_PREFIX = "/api/v4/error_tracking/collector"


@dataclass(frozen=True)
class Dsn:
    scheme: str
    public_key: str
    secret_key: str | None
    host: str
    port: int | None
    path_prefix: str  # "" or "/a/b": never a trailing slash
    project_id: str


def parse_dsn(text: str) -> Dsn:
    """Parse a DSN; raise ``BadRequest`` naming what is missing or malformed."""
    parts = _split(text.strip(), "DSN")
    if not parts.username:
        raise BadRequest("DSN has no public key")
    prefix, _, project_id = parts.path.rstrip("/").rpartition("/")
    if not project_id:
        raise BadRequest("DSN has no project id")
    return Dsn(
        scheme=parts.scheme,
        public_key=parts.username,
        secret_key=parts.password or None,
        host=parts.hostname or "",
        port=_port(parts, "DSN"),
        path_prefix=prefix,
        project_id=project_id,
    )


def build_dsn(
    external_url: str,
    public_key: str,
    project_id: int,
    *,
    secret_key: str | None = None,
    collector: bool = True,
) -> str:
    """The DSN SDKs use to reach this server at ``external_url`` (which may carry a base
    path). With ``collector`` the project id follows GitLab's collector path. Default
    ports are left out. Raises ``BadRequest`` when ``external_url`` is not http(s)."""
    parts = _split(external_url.strip(), "external URL")
    port = _port(parts, "external URL")
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS[parts.scheme]:
        host = f"{host}:{port}"
    credentials = f"{public_key}:{secret_key}" if secret_key else public_key
    path = parts.path.rstrip("/") + (COLLECTOR_PREFIX if collector else "")
    return f"{parts.scheme}://{credentials}@{host}{path}/{project_id}"


def _split(text: str, what: str) -> SplitResult:
    try:
        parts = urlsplit(text)
    except ValueError as e:
        raise BadRequest(f"{what} is not a URL: {e}") from e
    if parts.scheme not in _DEFAULT_PORTS:
        raise BadRequest(f"{what} scheme must be http or https")
    if not parts.hostname:
        raise BadRequest(f"{what} has no host")
    return parts


def _port(parts: SplitResult, what: str) -> int | None:
    try:
        return parts.port
    except ValueError as e:
        raise BadRequest(f"{what} has an invalid port") from e
