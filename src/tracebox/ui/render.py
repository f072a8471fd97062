"""Jinja2 templates (autoescape always on), display filters, static files, and the
security headers every UI response carries."""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import time
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jinja2
import orjson
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from tracebox.errors import NotFound

# No inline scripts or styles anywhere: htmx is configured not to inject its indicator
# style and never to evaluate attributes (see base.html's htmx-config meta element).
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}
STATIC_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}


@dataclass(frozen=True)
class StaticFile:
    body: bytes
    media_type: str
    version: str  # content hash: URLs carry it, so the file may be cached for a year


def load_static() -> dict[str, StaticFile]:
    files: dict[str, StaticFile] = {}
    for entry in resources.files("tracebox.ui").joinpath("static").iterdir():
        suffix = "." + entry.name.rsplit(".", 1)[-1]
        if entry.is_file() and suffix in STATIC_TYPES:
            body = entry.read_bytes()
            version = hashlib.sha256(body).hexdigest()[:12]
            files[entry.name] = StaticFile(body, STATIC_TYPES[suffix], version)
    return files


def static_response(files: dict[str, StaticFile], name: str, version: str | None) -> Response:
    found = files.get(name)
    if found is None:
        raise NotFound("")
    cache = "public, max-age=31536000, immutable" if version == found.version else "no-cache"
    headers = {"Cache-Control": cache, "X-Content-Type-Options": "nosniff"}
    return Response(found.body, media_type=found.media_type, headers=headers)


def make_environment(files: dict[str, StaticFile]) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("tracebox.ui", "templates"),
        autoescape=True,  # everything, whatever the template's name (contract 4)
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["static_url"] = lambda name: f"/-/static/{name}?v={files[name].version}"
    env.filters.update(
        timeago=timeago,
        utc=utc,
        iso=iso,
        number=number,
        percent=percent,
        pretty=pretty,
        clock=clock,
        filesize=filesize,
    )
    return env


def render(
    env: jinja2.Environment, template: str, status: int, context: dict[str, Any]
) -> Response:
    html = env.get_template(template).render(context)
    return secure(HTMLResponse(html, status_code=status))


def secure(response: Response) -> Response:
    """The UI's security headers; a response's own (stricter) Content-Security-Policy,
    such as an attachment download's ``sandbox``, is kept."""
    own_policy = response.headers.get("content-security-policy")
    response.headers.update(SECURITY_HEADERS)
    if own_policy:
        response.headers["Content-Security-Policy"] = own_policy
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def is_htmx(request: Request) -> bool:
    return request.headers.get("hx-request") == "true"


# --- filters -------------------------------------------------------------------------

_UNITS = (("year", 365 * 86400), ("month", 30 * 86400), ("day", 86400), ("hour", 3600))


def timeago(ts: float | None, now: float | None = None) -> str:
    if ts is None:
        return "never"
    seconds = (time.time() if now is None else now) - ts
    if seconds < 0:
        return "in the future"
    if seconds < 60:
        return "just now"
    for name, size in (*_UNITS, ("minute", 60)):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {name}{'' if n == 1 else 's'} ago"
    return "just now"


def utc(ts: float | None) -> str:
    if ts is None:
        return ""
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def iso(ts: float | None) -> str:
    if ts is None:
        return ""
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat(timespec="seconds")


def clock(ts: Any) -> str:
    if not isinstance(ts, int | float) or isinstance(ts, bool) or not math.isfinite(ts):
        return ""
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%H:%M:%S")


def number(n: int | None) -> str:
    return "0" if n is None else f"{n:,}"


def filesize(n: int | None) -> str:
    """Bytes as people read them: ``812 B``, ``14.2 KiB``, ``3.1 MiB``."""
    size = float(n or 0)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}%"


def pretty(value: Any) -> str:
    """A value from an event as text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return repr(value)
