"""URL rules of release artifacts (pure), as Sentry's.

A frame's ``abs_path`` (``https://shop.example/static/app.min.js?v=3#x``) matches an
uploaded file named by the full URL or by ``~`` plus its path: ``~/static/app.min.js``
(scheme and host left out, so one upload serves every host). Each is tried with its
query string, then without; the fragment never counts.
"""

from __future__ import annotations

import posixpath
from functools import lru_cache
from urllib.parse import unquote, urljoin, urlsplit

# Source map `sources` that name a bundler's namespace rather than a web location.
_BUNDLER_SCHEMES = ("webpack://", "webpack-internal://", "rollup://", "vite://")


@lru_cache(maxsize=4096)
def candidate_urls(abs_path: str) -> tuple[str, ...]:
    """Names an uploaded file may carry for a frame's ``abs_path``, best first."""
    url = abs_path.partition("#")[0]
    without_query = url.partition("?")[0]
    names = [url]
    if without_query != url:
        names.append(without_query)
    parts = urlsplit(url)
    if parts.scheme and (parts.netloc or parts.scheme not in ("http", "https")):
        path = parts.path or "/"
        tilde = f"~{path}" if path.startswith("/") else f"~/{path}"
        names.append(f"{tilde}?{parts.query}" if parts.query else tilde)
        if parts.query:
            names.append(tilde)
    elif url.startswith("/"):
        names.append(f"~{without_query}")
    return tuple(dict.fromkeys(names))


@lru_cache(maxsize=4096)  # a handful of (file, reference) pairs per build, per frame
def resolve(base: str, reference: str) -> str:
    """``reference`` (a ``sourceMappingURL`` or a map's source) relative to ``base``,
    which may be a ``~/`` name: ``resolve("~/static/app.js", "app.js.map")`` is
    ``~/static/app.js.map``."""
    if "://" in reference or reference.startswith("data:"):
        return reference
    if base.startswith("~/"):
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(base[1:]), reference))
        return "~" + (joined if joined.startswith("/") else "/" + joined)
    return urljoin(base, reference)


def source_filename(source: str) -> str:
    """What a mapped frame shows as its file: a bundler namespace and leading ``./``
    and ``../`` dropped (``webpack://shop/./src/cart.js`` -> ``src/cart.js``)."""
    name = source
    for scheme in _BUNDLER_SCHEMES:
        if name.startswith(scheme):
            rest = name[len(scheme) :]
            # webpack://<namespace>/./path: the namespace is not part of the file name
            name = rest.partition("/")[2] if not rest.startswith("/") else rest
            break
    else:
        if "://" in name:
            name = urlsplit(name).path
    name = unquote(name)
    while name.startswith(("./", "../", "/")):
        name = name.partition("/")[2]
    return name or source
