"""The SDK named by a request's ``sentry_client`` (or User-Agent), for events that do not
name their own: old raven clients send no ``sdk`` object. Pure."""

from __future__ import annotations

MAX_NAME_CHARS = 100


def sdk_from_client(client: str) -> dict[str, str] | None:
    """``{"name", "version"}`` from ``name/version`` (``raven-python/6.10.0``,
    ``sentry.java/6.18.1``); the first word of a longer User-Agent; ``None`` when empty."""
    word = client.strip().split(None, 1)[0] if client.strip() else ""
    if not word:
        return None
    name, _, version = word.partition("/")
    sdk = {"name": name[:MAX_NAME_CHARS] or word[:MAX_NAME_CHARS]}
    if version:
        sdk["version"] = version[:MAX_NAME_CHARS]
    return sdk
