"""The application factory: mounts ingest, the REST API and the web UI on one app.

Ingest requests go straight to ``IngestApp`` (``asgi.DirectFirst``); the others take
Starlette's middleware and routes to their surface.

Nothing is created at import time; ``create_app(settings)`` builds everything, and the
lifespan opens and closes the database and the spool writer.
"""

from __future__ import annotations

import contextlib
import gc
import logging
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware

from tracebox.api import ApiContext
from tracebox.api import mounts as api_mounts
from tracebox.asgi import DirectFirst, OneReadPerRequest, Surface
from tracebox.config import Settings
from tracebox.health import health_routes
from tracebox.ingest.counters import SharedCounters
from tracebox.ingest.keys import KeyCache
from tracebox.ingest.ratelimit import Limiter, LimiterSettings
from tracebox.ingest.routes import IngestApp, IngestContext
from tracebox.metrics import Metrics
from tracebox.spool import SpoolWriter
from tracebox.store import Database
from tracebox.tracking import ExternalBackend
from tracebox.ui import exception_handlers as ui_exception_handlers
from tracebox.ui import make_context as make_ui_context
from tracebox.ui import ui_routes

log = logging.getLogger("tracebox")


def create_app(settings: Settings | None = None) -> Starlette:
    settings = settings or Settings()
    db = Database(settings.resolved_database_url(), query_timeout_ms=settings.query_timeout_ms)
    metrics = Metrics()
    spool = SpoolWriter(
        settings.spool_dir,
        segment_bytes=settings.spool_segment_bytes,
        max_undigested_bytes=settings.spool_max_bytes,
        commit_interval_s=settings.spool_commit_interval_ms / 1000,
        retry_after=settings.retry_after_seconds,
        segment_max_age_s=settings.spool_segment_max_age_seconds,
        min_free_bytes=settings.spool_min_free_bytes,
        reminder_seconds=settings.log_reminder_seconds,
    )
    ingest = IngestContext(
        settings=settings,
        keys=KeyCache(
            db,
            ttl=settings.key_cache_seconds,
            stale_seconds=settings.key_stale_seconds,
            retry_after=settings.retry_after_seconds,
            reminder_seconds=settings.log_reminder_seconds,
        ),
        limiter=Limiter.for_database(
            db, SharedCounters.in_data_dir(settings.data_dir), limiter_settings(settings)
        ),
        spool=spool,
        metrics=metrics,
    )

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        await spool.start()
        # Everything built so far lives as long as the process: keep it out of the
        # garbage collector's full passes, which otherwise scan it every time and add
        # ~50 ms pauses to page loads (bench/ui_bench.py; docs/performance.md).
        gc.collect()
        gc.freeze()
        try:
            yield
        finally:
            await spool.close()
            ingest.limiter.counters.close()
            db.dispose()

    # The API and the UI forget a deleted key in this node's ingest cache at once
    # (contract 6: api, ui and ingest meet only here).
    # One external-backend cache for both, so a status change made in one shows in the other.
    external = ExternalBackend.from_settings(settings)
    api_context = ApiContext(
        settings=settings, db=db, on_key_deleted=ingest.keys.forget, external=external
    )
    ui_context = make_ui_context(settings, db, on_key_deleted=ingest.keys.forget, external=external)
    # One error boundary per surface (contract 7): each mount renders its own shape.
    # Ingestion's is IngestApp's own; it sees its requests first, so
    # /api/v4/error_tracking/collector/... is ingestion, not the REST API.
    routes = [
        *health_routes(settings, db, metrics),
        *api_mounts(api_context),  # FastAPI apps with their own handlers (api.problems)
        # Last: /<project path>/-/... matches almost any path, and so does its 404 page.
        Surface(
            ui_routes(ui_context),
            ui_exception_handlers(ui_context),
            catch_all=True,
            middleware=[Middleware(OneReadPerRequest, db=db)],
        ),
    ]
    app = DirectFirst(IngestApp(ingest), routes=routes, lifespan=lifespan)
    app.state.settings = settings
    app.state.db = db
    app.state.metrics = metrics
    return app


def limiter_settings(settings: Settings) -> LimiterSettings:
    return LimiterSettings(
        key_events_per_minute=settings.rate_limit_events_per_minute,
        nodes=settings.quota_nodes,
        spike_min_per_minute=settings.spike_protection_min_per_minute,
        spike_seconds=settings.spike_protection_seconds,
        cache_seconds=settings.key_cache_seconds,
    )


def create_app_from_env() -> Starlette:
    """Factory for uvicorn's worker processes: settings come from TRACEBOX_* variables."""
    return create_app(Settings())
