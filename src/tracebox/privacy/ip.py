"""IP addresses: where events hold them, and anonymisation (pure)."""

from __future__ import annotations

import ipaddress
import re

from tracebox.privacy.rules import normalize_key

# request.env variables (WSGI/CGI names) and request headers that carry a client address.
IP_ENV_KEYS = frozenset(
    normalize_key(k)
    for k in (
        "REMOTE_ADDR",
        "HTTP_X_FORWARDED_FOR",
        "HTTP_X_REAL_IP",
        "HTTP_FORWARDED",
        "HTTP_CLIENT_IP",
        "HTTP_CF_CONNECTING_IP",
        "HTTP_TRUE_CLIENT_IP",
    )
)
IP_HEADERS = frozenset(
    normalize_key(h)
    for h in (
        "X-Forwarded-For",
        "X-Real-IP",
        "Forwarded",
        "Client-IP",
        "X-Client-IP",
        "X-Cluster-Client-IP",
        "CF-Connecting-IP",
        "True-Client-IP",
        "Fastly-Client-IP",
        "X-Original-Forwarded-For",
        "X-Envoy-External-Address",
    )
)
IPV4_KEPT_BITS = 24  # issue 11: zero the last octet
IPV6_KEPT_BITS = 48  # issue 11: zero the last 80 bits

# Candidates inside a header value: "203.0.113.7, 10.0.0.1", "for=192.0.2.60:4711",
# 'for="[2001:db8::1]:4711"'. Anything that does not parse as an address is left alone.
_CANDIDATE = re.compile(r"[0-9A-Fa-f]*[:.][0-9A-Fa-f:.]*[0-9A-Fa-f]")


def anonymize(address: str) -> str | None:
    """The address with its host part zeroed (IPv4 /24, IPv6 /48; an IPv4-mapped IPv6
    address as IPv4), or None if ``address`` is not an IP address."""
    try:
        ip = ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return "::ffff:" + _zeroed(ip.ipv4_mapped, IPV4_KEPT_BITS)
    kept = IPV4_KEPT_BITS if ip.version == 4 else IPV6_KEPT_BITS
    return _zeroed(ip, kept)


def _zeroed(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, kept: int) -> str:
    host_bits = ip.max_prefixlen - kept
    return str(type(ip)((int(ip) >> host_bits) << host_bits))


def anonymize_text(text: str) -> str:
    """Every IP address in a header value anonymised (a port stays as it was)."""
    return _CANDIDATE.sub(_anonymize_candidate, text)


def _anonymize_candidate(match: re.Match[str]) -> str:
    token = match.group()
    whole = anonymize(token)
    if whole is not None:
        return whole
    host, sep, port = token.rpartition(":")  # IPv4 with a port
    if sep and port.isdigit() and "." in host:
        anonymized = anonymize(host)
        if anonymized is not None:
            return f"{anonymized}:{port}"
    return token
