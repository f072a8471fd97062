"""Outbound request safety: which URLs and addresses the Sentry client may reach.

Only http(s). The host is resolved first and every address it resolves to must be on
the public internet: loopback, private, link-local (including the cloud metadata address
169.254.169.254), carrier-grade NAT, multicast and reserved ranges are refused unless
``allow_local_network`` is set (GitLab's "Allow requests to the local network from
webhooks and integrations", for a self-hosted Sentry in the same network). Redirects are
never followed, so a public server cannot bounce a request to an internal one.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from tracebox.sentry_client.errors import SentryError

MAX_URL_LENGTH = 2048


def check_url(url: str) -> tuple[str, int]:
    """The host and port of an http(s) URL; ``SentryError`` otherwise."""
    parts = urlsplit(url) if len(url) <= MAX_URL_LENGTH else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise SentryError("The Sentry API URL must be an http or https URL", "refused_address")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as e:
        raise SentryError("The Sentry API URL has an invalid port", "refused_address") from e
    return parts.hostname, port


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def resolve(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        raise SentryError(
            f"Could not resolve the Sentry host {host!r} (DNS lookup failed: {e})", "dns"
        ) from e
    return sorted({str(info[4][0]) for info in infos})


def check_destination(url: str, *, allow_local_network: bool) -> None:
    """Refuse a URL whose host resolves to a non-public address (unless allowed)."""
    host, port = check_url(url)
    addresses = resolve(host, port)
    if allow_local_network:
        return
    refused = [a for a in addresses if not is_public(a)]
    if refused:
        raise SentryError(
            f"Requests to the local network are not allowed: {host} resolves to "
            f"{refused[0]}. An administrator can allow them with "
            "TRACEBOX_EXTERNAL_ALLOW_LOCAL_NETWORK=true",
            "refused_address",
        )
