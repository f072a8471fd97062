"""Flat event attributes that need cleaning: tags, user, request, fingerprint."""

from __future__ import annotations

from typing import Any

from tracebox.protocol._coerce import pairs, text

MAX_TAG_KEY_CHARS = 200  # as Relay
MAX_TAG_VALUE_CHARS = 200  # as Relay
AUTO_IP = "{{auto}}"  # the SDKs' request for the connection's address


def normalize_tags(value: Any) -> list[list[str]]:
    """``[[key, value], ...]`` from an object or a pair list: values stringified, keys and
    values cut to 200 chars, pairs with an empty key or value dropped, the first of
    duplicate keys kept."""
    tags: list[list[str]] = []
    seen: set[str] = set()
    for raw_key, raw_value in pairs(value):
        key = text(raw_key, MAX_TAG_KEY_CHARS)
        tag_value = text(raw_value, MAX_TAG_VALUE_CHARS)
        if not key or not tag_value or key in seen or not key.strip() or not tag_value.strip():
            continue
        seen.add(key)
        tags.append([key, tag_value])
    return tags


def normalize_user(value: Any, client_ip: str | None) -> dict[str, Any] | None:
    """The user object, its ``id`` a string and ``ip_address`` ``{{auto}}`` replaced by
    ``client_ip`` (removed when that is unknown); ``None`` if not an object or empty."""
    if not isinstance(value, dict):
        return None
    user = dict(value)
    user_id = text(user.pop("id", None), 128)
    if user_id is not None:
        user["id"] = user_id
    for key in ("email", "username", "ip_address", "name"):
        if key in user and not isinstance(user[key], str):
            del user[key]
    if user.get("ip_address") == AUTO_IP:
        if client_ip:
            user["ip_address"] = client_ip
        else:
            del user["ip_address"]
    return user or None


def normalize_request(value: Any) -> dict[str, Any] | None:
    """The request object with ``headers`` as a ``[[name, value], ...]`` pair list of
    strings; ``url`` and ``method`` kept only as strings."""
    if not isinstance(value, dict):
        return None
    request = dict(value)
    for key in ("url", "method"):
        if key in request and not isinstance(request[key], str):
            del request[key]
    if "headers" in request:
        request["headers"] = _headers(request["headers"])
    return request or None


def _headers(value: Any) -> list[list[str]]:
    headers = []
    for raw_name, raw_value in pairs(value):
        # text()'s first case, a string (cut), inline: nearly every header is one.
        name = raw_name[:1024] if type(raw_name) is str else text(raw_name, 1024)
        header = raw_value[:8192] if type(raw_value) is str else text(raw_value, 8192)
        if name and header:
            headers.append([name, header])
    return headers


def normalize_fingerprint(value: Any) -> list[str] | None:
    """The SDK's fingerprint as strings (numbers and booleans stringified, as Relay);
    ``None`` when not a list or nothing usable is left."""
    if not isinstance(value, list):
        return None
    fingerprint = [part for part in (text(v, 1024) for v in value) if part is not None]
    return fingerprint or None
