"""ASGI pieces every web surface shares: a mount with its own error boundary, the app
that sends a direct surface's requests straight to it, and one read transaction per
request.

``app.py`` mounts each surface (REST API, UI) with the exception handlers that render its
error shape (ARCHITECTURE contract 7), as Starlette does it: an ``ExceptionMiddleware``
per mount, so endpoints raise ``errors.*`` and never catch to build a response
themselves. Ingestion, the hot path, is a ``DirectSurface``: an ASGI app with its own
error boundary, reached without Starlette's middleware and routing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.routing import BaseRoute, Match, Mount
from starlette.types import ASGIApp, ExceptionHandler, Receive, Scope, Send

from tracebox.store import Database


class Surface(Mount):
    """Routes mounted at the root with their own exception handlers.

    A plain ``Mount("")`` matches every path, so the surfaces after it would never be
    reached; a surface matches only the paths one of its routes matches, unless it is
    the ``catch_all`` one (the UI: an unknown path gets its HTML 404 page).
    """

    def __init__(
        self,
        routes: Sequence[BaseRoute],
        handlers: Mapping[Any, ExceptionHandler],
        *,
        catch_all: bool = False,
        middleware: Sequence[Middleware] = (),
    ) -> None:
        stack = [Middleware(ExceptionMiddleware, handlers=handlers), *middleware]
        super().__init__("", routes=routes, middleware=stack)
        self.catch_all = catch_all

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child = super().matches(scope)
        if match is Match.NONE or self.catch_all:
            return match, child
        inner = {**scope, **child}
        if any(route.matches(inner)[0] is not Match.NONE for route in self.routes):
            return match, child
        return Match.NONE, {}


class DirectSurface(Protocol):
    """A surface that answers its requests whole, error boundary included."""

    def claims(self, scope: Scope) -> Any:
        """What the surface reads in this HTTP request's path when the request is its
        own (decided by the path alone), else None."""

    async def serve(self, claim: Any, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a request it claimed, given what ``claims`` returned."""


class DirectFirst(Starlette):
    """A Starlette app whose ``direct`` surface gets the HTTP requests it claims before
    any middleware or route sees them; every other request takes the usual way."""

    def __init__(self, direct: DirectSurface, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.direct = direct

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        claim = self.direct.claims(scope) if scope["type"] == "http" else None
        if claim is not None:
            await self.direct.serve(claim, scope, receive, send)
        else:
            await super().__call__(scope, receive, send)


class OneReadPerRequest:
    """Every ``db.read()`` of a request shares one read transaction (a consistent
    snapshot, one connection), closed when the response has been sent."""

    def __init__(self, app: ASGIApp, db: Database) -> None:
        self.app = app
        self.db = db

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with self.db.request_reads() as reads:
            try:
                await self.app(scope, receive, send)
            finally:
                if reads.opened:
                    await run_in_threadpool(reads.close)
