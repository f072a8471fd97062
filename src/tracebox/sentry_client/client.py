"""HTTP calls to a Sentry server's web API, bounded and with errors that name the cause."""

from __future__ import annotations

import re
import ssl
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from tracebox.sentry_client.errors import TOKEN_REFUSED, SentryError
from tracebox.sentry_client.options import ClientOptions
from tracebox.sentry_client.pagination import Links, parse_link_header
from tracebox.sentry_client.safety import check_destination

SLASHES = re.compile(r"/{2,}")  # Sentry answers 404 to paths with doubled slashes (GitLab)
OK_STATUSES = range(200, 205)  # as GitLab: anything outside 200..204 is an error


@dataclass(frozen=True)
class SentryResponse:
    body: Any
    links: Links


class SentryClient:
    """One Sentry server (``base_url``, e.g. ``https://sentry.example.com``) and token."""

    def __init__(
        self,
        base_url: str,
        token: str,
        options: ClientOptions,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._token = token
        self._options = options
        self._transport = transport

    def get(self, path: str, params: dict[str, str] | None = None) -> SentryResponse:
        return self._request("GET", path, params=params)

    def put(self, path: str, body: dict[str, Any]) -> SentryResponse:
        return self._request("PUT", path, body=body)

    def _url(self, path: str) -> str:
        return self.base_url + SLASHES.sub("/", "/api/0/" + path.lstrip("/"))

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
    ) -> SentryResponse:
        url = self._url(path)
        check_destination(url, allow_local_network=self._options.allow_local_network)
        o = self._options
        timeout = httpx.Timeout(o.read_timeout_s, connect=o.connect_timeout_s)
        headers = {"Authorization": f"Bearer {self._token}", "Accept": "application/json"}
        content = orjson.dumps(body) if body is not None else None
        if content is not None:
            headers["Content-Type"] = "application/json"
        try:
            with (
                httpx.Client(
                    timeout=timeout, follow_redirects=False, transport=self._transport
                ) as client,
                client.stream(
                    method, url, params=params, headers=headers, content=content
                ) as response,
            ):
                _check_status(response)
                raw = _read_capped(response, o.max_response_bytes)
                links = parse_link_header(response.headers.get("link"))
        except httpx.HTTPError as e:
            raise _transport_error(e, url, o) from e
        return SentryResponse(_decode(raw), links)


def _check_status(response: httpx.Response) -> None:
    status = response.status_code
    if status in OK_STATUSES:
        return
    if status in (401, 403):
        raise SentryError(TOKEN_REFUSED.format(status=status), "auth", upstream_status=status)
    if 300 <= status < 400:
        where = response.headers.get("location", "")[:200]
        raise SentryError(
            f"Sentry answered with a redirect ({status} to {where}); redirects are not "
            "followed. Check the Sentry API URL",
            "redirect",
            upstream_status=status,
        )
    hint = " (not found: check the API URL and the linked project)" if status == 404 else ""
    raise SentryError(
        f"Sentry response status code: {status}{hint}", "status", upstream_status=status
    )


def _read_capped(response: httpx.Response, limit: int) -> bytes:
    """Read at most ``limit`` bytes; stop streaming as soon as the body is larger."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_big(limit, int(declared))
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            raise _too_big(limit, size)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_big(limit: int, size: int) -> SentryError:
    return SentryError(
        f"Sentry API response is too big. Limit is {limit} bytes. Got at least {size} bytes",
        "size",
    )


def _decode(raw: bytes) -> Any:
    if not raw.strip():
        return {}
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise SentryError(
            "Sentry returned a response that is not JSON. Check the Sentry API URL", "json"
        ) from e


def _transport_error(e: httpx.HTTPError, url: str, o: ClientOptions) -> SentryError:
    host = httpx.URL(url).host
    if isinstance(e, httpx.ConnectTimeout):
        return SentryError(
            f"Connection to Sentry timed out: {host} did not accept a connection within "
            f"{o.connect_timeout_s:g} seconds",
            "timeout",
        )
    if isinstance(e, httpx.TimeoutException):
        return SentryError(
            f"Sentry request timed out: {host} did not answer within {o.read_timeout_s:g} seconds",
            "timeout",
        )
    tls = _ssl_cause(e)
    if tls is not None:
        reason = getattr(tls, "verify_message", None) or getattr(tls, "reason", None) or tls
        return SentryError(
            f"TLS error with {host}: the TLS library refused the connection ({reason})", "tls"
        )
    if isinstance(e, httpx.ConnectError):
        return SentryError(f"Connection to Sentry at {host} failed: {_root(e)}", "connect")
    return SentryError(f"Sentry request failed ({type(e).__name__}: {_root(e)})", "connect")


def _ssl_cause(e: BaseException) -> ssl.SSLError | None:
    seen: BaseException | None = e
    for _ in range(10):
        if seen is None:
            return None
        if isinstance(seen, ssl.SSLError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _root(e: BaseException) -> str:
    while e.__cause__ is not None or e.__context__ is not None:
        e = e.__cause__ or e.__context__  # type: ignore[assignment]
    return str(e) or type(e).__name__
