"""POST a notification to a receiver's URL under the outbound safety rules.

The rules are the external backend's (``sentry_client.safety``): http(s) only; every
address the host resolves to must be public (no loopback, private, link-local or cloud
metadata address) unless the instance allows the local network; redirects are never
followed. The request then connects to the address that was checked (the Host header
and TLS name stay the host's), so a DNS answer that changes between the check and the
connection cannot reach an internal address. Timeouts bound the connection and the
answer, and at most ``max_response_bytes`` of the answer are read.
"""

from __future__ import annotations

import email.utils
import ipaddress
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from tracebox import __version__
from tracebox.config import Settings
from tracebox.errors import BadRequest
from tracebox.sentry_client import SentryError
from tracebox.sentry_client.safety import MAX_URL_LENGTH, is_public, resolve

if TYPE_CHECKING:
    import httpx

USER_AGENT = f"Tracebox/{__version__} (alerts)"
EXCERPT_CHARS = 1000  # of a receiver's answer, kept in the delivery log
RETRYABLE_4XX = (408, 429)  # request timeout, too many requests: try again later


class RefusedDestination(BadRequest):
    """A URL the outbound rules refuse (rendered as 400 where a user entered it)."""


@dataclass(frozen=True)
class OutboundOptions:
    connect_timeout_s: float = 5.0
    read_timeout_s: float = 10.0
    max_response_bytes: int = 64 * 1024
    allow_local_network: bool = False

    @classmethod
    def from_settings(cls, s: Settings) -> OutboundOptions:
        return cls(
            s.alert_connect_timeout_seconds,
            s.alert_read_timeout_seconds,
            s.alert_max_response_bytes,
            s.alert_allow_local_network,
        )


@dataclass(frozen=True)
class Answer:
    """A receiver's answer, or why there was none."""

    ok: bool
    status: int | None = None
    body: str = ""
    error: str | None = None
    permanent: bool = False  # retrying cannot help (4xx but 408/429, refused URL, ...)
    retry_after: float | None = None  # seconds the receiver asked us to wait


@dataclass(frozen=True)
class Destination:
    url: str  # as entered
    host: str
    port: int
    address: str  # the checked address to connect to


def check(url: str, options: OutboundOptions) -> Destination:
    """Parse, resolve and check ``url``; ``RefusedDestination`` says why not."""
    parts = urlsplit(url) if len(url) <= MAX_URL_LENGTH else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise RefusedDestination("The URL must be an http or https URL")
    if parts.username or parts.password:
        raise RefusedDestination("The URL must not contain a user name or password")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as e:
        raise RefusedDestination("The URL has an invalid port") from e
    try:
        addresses = resolve(parts.hostname, port)
    except SentryError as e:
        raise RefusedDestination(f"Could not resolve the host {parts.hostname!r}") from e
    refused = [a for a in addresses if not is_public(a)]
    if refused and not options.allow_local_network:
        raise RefusedDestination(
            f"Requests to the local network are not allowed: {parts.hostname} resolves to "
            f"{refused[0]}. An administrator can allow them with "
            "TRACEBOX_ALERT_ALLOW_LOCAL_NETWORK=true"
        )
    return Destination(url, parts.hostname, port, addresses[0])


def display(url: str) -> str:
    """What lists show of a URL: scheme and host only (the path may hold a token)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}"[:255]


def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    options: OutboundOptions,
    transport: httpx.BaseTransport | None = None,
) -> Answer:
    """POST ``body`` (JSON) to ``url``; never raises for the receiver's failures."""
    import httpx  # here: the background process loads it (~8 MB) only to deliver

    try:
        dest = check(url, options)
    except RefusedDestination as e:
        return Answer(False, error=e.message, permanent=True)
    timeout = httpx.Timeout(options.read_timeout_s, connect=options.connect_timeout_s)
    parts = urlsplit(url)
    host_header = parts.netloc.rsplit("@", 1)[-1]
    pinned = urlunsplit(parts._replace(netloc=_netloc(dest.address, dest.port)))
    all_headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        **headers,
        "Host": host_header,
    }
    extensions = {"sni_hostname": dest.host} if parts.scheme == "https" else {}
    try:
        with (
            httpx.Client(timeout=timeout, follow_redirects=False, transport=transport) as client,
            client.stream(
                "POST", pinned, content=body, headers=all_headers, extensions=extensions
            ) as response,
        ):
            text = _read_capped(response, options.max_response_bytes)
            return classify(response.status_code, text, response.headers.get("retry-after"))
    except httpx.TimeoutException:
        return Answer(False, error=f"{dest.host} did not answer in time")
    except httpx.HTTPError as e:
        return Answer(False, error=f"Could not reach {dest.host}: {type(e).__name__}: {e}"[:500])


def classify(status: int, text: str, retry_after: str | None) -> Answer:
    """2xx delivered; 408/429/5xx retried (honouring Retry-After); other 4xx and
    redirects are permanent: the same request would fail again."""
    excerpt = text[:EXCERPT_CHARS]
    if 200 <= status < 300:
        return Answer(True, status, excerpt)
    wait = parse_retry_after(retry_after)
    if status in RETRYABLE_4XX or status >= 500:
        return Answer(False, status, excerpt, f"HTTP {status}", retry_after=wait)
    if 300 <= status < 400:
        return Answer(False, status, excerpt, f"HTTP {status}: redirects are not followed", True)
    return Answer(False, status, excerpt, f"HTTP {status}", permanent=True)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _netloc(address: str, port: int) -> str:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    host = f"[{address}]" if ip.version == 6 else address
    return f"{host}:{port}"


def _read_capped(response: httpx.Response, limit: int) -> str:
    """At most ``limit`` bytes of the answer: a receiver cannot make us read more."""
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        chunks.append(chunk[: max(0, limit - size)])
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(chunks).decode("utf-8", "replace")
