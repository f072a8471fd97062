"""Keep ``%2F`` in a path segment, so ``/projects/acme%2Fweb`` names one project.

The ASGI server decodes ``%2F`` to ``/`` in ``scope["path"]``, which would split the
project path into two segments and match no route. This middleware rebuilds the path
from ``raw_path``, decoding everything except ``%2F``; handlers then unquote ``{id}``.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from starlette.routing import Mount
from starlette.types import ASGIApp, Receive, Scope, Send

_ENCODED_SLASH = re.compile(rb"%2f", re.IGNORECASE)


class EncodedSlashPaths:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path")
        if scope["type"] == "http" and raw and _ENCODED_SLASH.search(raw):
            raw_path = raw.split(b"?", 1)[0]
            parts = _ENCODED_SLASH.split(raw_path)
            path = "%2F".join(unquote(p.decode("latin-1")) for p in parts)
            scope = {**scope, "path": path}
        await self.app(scope, receive, send)


class ApiMount(Mount):
    """A ``Mount`` whose sub-path may hold any character: Starlette's ``{path:path}`` is
    ``.*``, which stops at a decoded newline (``%0A``) and would leave such a request to
    the outer app's plain-text 404 instead of the API's JSON one."""

    def __init__(self, path: str, app: ASGIApp) -> None:
        super().__init__(path, app=app)
        self.path_regex = re.compile(self.path_regex.pattern, re.DOTALL)
