"""The REST API: GitLab-style ``/api/v4`` and the Sentry-compatible ``/api/0`` subset.

``create_v4(ctx)`` and ``create_sentry(ctx)`` build one FastAPI app each; ``mounts(ctx)``
places them at ``/api/v4`` and ``/api/0``, and ``app.py`` puts those after the ingest
routes. The OpenAPI document
is at ``/api/v4/openapi.json``, browsable at ``/api/v4/docs``.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from starlette.routing import BaseRoute

from tracebox import __version__ as tracebox_version
from tracebox.api import (
    problems,
    routes_alerts,
    routes_artifacts,
    routes_errors,
    routes_privacy,
    routes_projects,
    routes_sdkdata,
    routes_storage,
    routes_tracking,
    routes_users,
    routes_workflow,
    sentry_artifacts,
    sentry_release_files,
    sentry_releases,
)
from tracebox.api import sentry as sentry_routes
from tracebox.api.context import ApiContext
from tracebox.api.rawpath import ApiMount, EncodedSlashPaths
from tracebox.asgi import OneReadPerRequest

__all__ = ["ApiContext", "create_sentry", "create_v4", "mounts"]

DESCRIPTION = """GitLab-style REST API of Tracebox. Authenticate with a personal access
token in `PRIVATE-TOKEN: <token>` or `Authorization: Bearer <token>`; `read_api` tokens
may only read. Wherever `{id}` names a project, its URL-encoded full path works too
(`acme%2Fweb`). Small lists paginate with `page`/`per_page` (headers `X-Total`,
`X-Next-Page`, `Link`); errors and events by keyset cursor (`Link: <...>; rel="next"`)."""


def mounts(ctx: ApiContext) -> list[BaseRoute]:
    """The two API surfaces, to be placed after the ingest routes."""
    return [ApiMount("/api/v4", create_v4(ctx)), ApiMount("/api/0", create_sentry(ctx))]


def create_v4(ctx: ApiContext) -> FastAPI:
    app = FastAPI(
        title="Tracebox REST API",
        version=tracebox_version,
        description=DESCRIPTION,
        openapi_url="/openapi.json",
        docs_url="/docs",
        redoc_url=None,
        responses=problems.PROBLEM_RESPONSES,
    )
    app.state.api_context = ctx
    v4_routers = (
        routes_users,
        routes_projects,
        routes_tracking,
        routes_errors,
        routes_artifacts,
        routes_storage,
        routes_privacy,
        routes_alerts,
        routes_sdkdata,
        routes_workflow,
    )
    for module in v4_routers:
        app.include_router(module.router)
    problems.install(app, problems.gitlab_body)
    app.add_middleware(OneReadPerRequest, db=ctx.db)
    app.add_middleware(EncodedSlashPaths)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def create_sentry(ctx: ApiContext) -> FastAPI:
    """Sentry's web API subset (reference section 10); not in the OpenAPI document."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.state.api_context = ctx
    app.include_router(sentry_routes.router)
    app.include_router(sentry_releases.router)  # sentry-cli: auth, organizations, releases
    app.include_router(sentry_artifacts.router)  # sentry-cli: source map uploads
    app.include_router(sentry_release_files.router)  # older sentry-cli: release files
    problems.install(app, problems.sentry_body)
    app.add_middleware(OneReadPerRequest, db=ctx.db)
    app.add_middleware(EncodedSlashPaths)
    return app


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, with its 422 responses replaced by GitLab's 400."""
    if app.openapi_schema is None:
        schema = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
        )
        for path in schema.get("paths", {}).values():
            for operation in path.values():
                operation.get("responses", {}).pop("422", None)
        for name in ("HTTPValidationError", "ValidationError"):
            schema.get("components", {}).get("schemas", {}).pop(name, None)
        app.openapi_schema = schema
    return app.openapi_schema
