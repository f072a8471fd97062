"""URLs of UI pages, built in one place (templates and handlers use these)."""

from __future__ import annotations

from urllib.parse import quote, urlencode


def project_url(path: str, suffix: str = "") -> str:
    return f"/{quote(path)}/-/{suffix}"


def errors_url(path: str, **query: str | None) -> str:
    params = {k: v for k, v in query.items() if v}
    return project_url(path, "error_tracking") + (f"?{urlencode(params)}" if params else "")


def error_url(path: str, error_id: int, cursor: str | None = None) -> str:
    url = project_url(path, f"error_tracking/{error_id}")
    return url + (f"?{urlencode({'cursor': cursor})}" if cursor else "")


def safe_next(target: str | None, default: str) -> str:
    """A same-site path to go back to; anything else (other hosts, ``//x``, ``/\\x``,
    schemes) falls back to ``default`` (no open redirects)."""
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")):
        return default
    if any(c in target for c in "\r\n\x00") or len(target) > 2000:
        return default
    return target
