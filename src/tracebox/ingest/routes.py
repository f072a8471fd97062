"""HTTP surface of ingestion: the store and envelope endpoints, CORS, and the error
boundary that renders every failure in Relay's shape.

Both DSN forms work: ``http://KEY@host/ID`` (Sentry's, path ``/api/ID/...``) and
``http://KEY@host/api/v4/error_tracking/collector/ID`` (GitLab's, the one Tracebox gives
out), with or without the trailing slash.

Every event goes through here, so ``IngestApp`` matches its paths and answers its
requests itself, errors included (``asgi.DirectFirst`` hands them over): the Starlette
stacks (two middleware stacks, two routers, a mount) cost about a seventh of a web
worker's CPU per event (issue 10).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, TypeVar

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from tracebox.config import Settings
from tracebox.errors import (
    BadRequest,
    Forbidden,
    MethodNotAllowed,
    PayloadTooLarge,
    RateLimited,
    TraceboxError,
    Unauthorized,
    retry_after,
)
from tracebox.ingest.keys import KeyCache
from tracebox.ingest.process import Accepted, Origin, process_envelope, process_store
from tracebox.ingest.ratelimit import Limited, Limiter, rate_limits_header
from tracebox.metrics import Metrics
from tracebox.models import IngestKey
from tracebox.protocol.auth import SentryAuth, auth_from_envelope_dsn, auth_from_request
from tracebox.protocol.decoding import decode_store_body, decompress, is_gzip
from tracebox.protocol.envelope import Envelope, parse_envelope
from tracebox.spool import SpoolWriter
from tracebox.spool.record import RecordKind

log = logging.getLogger("tracebox.ingest")

# Request bodies larger than this (compressed) are decompressed and framed in a worker
# thread. SDK requests are a few KiB; the thread hop costs about as much as decompressing
# 16 KiB, and a body this size inflates to at most 16 MiB (gzip's 1:1032 ratio).
OFF_LOOP_BODY_BYTES = 16 * 1024

T = TypeVar("T")

# The endpoints under the three prefixes: /api/ID (Sentry's), and GitLab's
# /api/v4/error_tracking/collector/api/ID and /api/v4/error_tracking/collector/ID.
ROUTE = re.compile(
    r"/api/(?:v4/error_tracking/collector/(?:api/)?)?"
    r"(?P<project_id>[^/]+)/(?P<endpoint>store|envelope)/?"
)
ALLOWED_METHODS = {"Allow": "POST, OPTIONS"}
CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Expose-Headers": "x-sentry-error, x-sentry-rate-limits, retry-after",
}
PREFLIGHT_HEADERS = {
    **CORS_HEADERS,
    "Access-Control-Allow-Methods": "POST, OPTIONS",
    "Access-Control-Allow-Headers": (
        "x-sentry-auth, authorization, content-type, content-encoding, sentry-trace, baggage"
    ),
    "Access-Control-Max-Age": "3600",
}
METHOD_NOT_ALLOWED = (
    "send events with POST; the image-pixel GET form of old JavaScript clients "
    "(store/?sentry_data=...) is not supported"
)


@dataclass
class IngestContext:
    settings: Settings
    keys: KeyCache
    limiter: Limiter
    spool: SpoolWriter
    metrics: Metrics


@dataclass
class Call:
    """What the error boundary and the metrics know of one ingest request."""

    endpoint: str  # the metrics' label: "store", "envelope", or "unrouted" (refused first)
    started: float | None = None  # perf_counter() when handling began; None: not timed
    project_id: int | None = None  # the authenticated key's project: refusals count on it
    rate_limits: str | None = None  # X-Sentry-Rate-Limits of a partly limited request


Handler = Callable[[IngestContext, Request, Call, int], Awaitable[Accepted]]


class IngestApp:
    """The ingest endpoints with their own error boundary: errors leave the
    handlers as exceptions and are rendered here, in Relay's shape with the CORS headers
    a browser SDK needs to read them; only unexpected ones are logged, as 500s."""

    def __init__(self, ctx: IngestContext) -> None:
        self.ctx = ctx
        self.handlers: dict[str, Handler] = {"store": _handle_store, "envelope": _handle_envelope}

    def claims(self, scope: Scope) -> re.Match[str] | None:
        """The endpoint and project id in the request's path when it is an ingest
        endpoint's (any method), else None."""
        return ROUTE.fullmatch(_route_path(scope))

    async def serve(self, match: re.Match[str], scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a request whose path ``claims`` matched (the path is read once)."""
        method = scope["method"]
        if method == "OPTIONS":
            response = Response(status_code=200, headers=PREFLIGHT_HEADERS)
        elif method != "POST":
            error = MethodNotAllowed(METHOD_NOT_ALLOWED)
            response = _rejected(self.ctx, Call("unrouted"), error, ALLOWED_METHODS)
        else:
            call = Call(match["endpoint"])
            try:
                response = await self._accept(Request(scope, receive), call, match["project_id"])
            except Exception as e:
                response = _rejected(self.ctx, call, *_as_error(e))
        await response(scope, receive, send)

    async def _accept(self, request: Request, call: Call, raw_project_id: str) -> Response:
        ctx = self.ctx
        started = call.started = time.perf_counter()
        accepted = await self.handlers[call.endpoint](
            ctx, request, call, _project_id(raw_project_id)
        )
        # The records leave ``accepted`` as they are encoded: a request that waits for the
        # spool's fsync holds their bytes alone, not the event inflated and the body as
        # sent (16 KB for a typical event; hundreds of requests wait when the disk stalls).
        await ctx.spool.append(accepted.take_encoded())
        ctx.metrics.accepted(call.endpoint, accepted.events, accepted.dropped)
        ctx.metrics.latency(call.endpoint, time.perf_counter() - started)
        body = {"id": accepted.event_id} if accepted.event_id else {}
        headers = CORS_HEADERS
        if call.rate_limits is not None:
            headers = {**CORS_HEADERS, "X-Sentry-Rate-Limits": call.rate_limits}
        return Response(orjson.dumps(body), media_type="application/json", headers=headers)


def _route_path(scope: Scope) -> str:
    """The path under the app's root path, as Starlette's routing reads it."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root + "/"):
        return path[len(root) :]
    return path


def _as_error(e: Exception) -> tuple[TraceboxError, Mapping[str, str] | None]:
    """The error to render for an exception, and the headers it brings."""
    if isinstance(e, TraceboxError):
        return e, None
    if isinstance(e, HTTPException):  # raised by a Starlette helper
        error = TraceboxError(e.detail)
        error.status_code = e.status_code
        return error, e.headers
    log.exception("unexpected error in ingestion", exc_info=e)
    return TraceboxError("internal server error"), None


def _rejected(
    ctx: IngestContext,
    call: Call,
    error: TraceboxError,
    headers: Mapping[str, str] | None = None,
) -> Response:
    ctx.metrics.rejected(call.endpoint, type(error).__name__)
    _count_refusal(ctx, call, error)
    if call.started is not None:
        ctx.metrics.latency(call.endpoint, time.perf_counter() - call.started)
    response = error_response(error)
    response.headers.update({**CORS_HEADERS, **(headers or {})})
    return response


def error_response(error: TraceboxError) -> Response:
    """Relay's error shape: ``{"detail": ...}`` plus ``X-Sentry-Error``. Retry-After only on
    429 and 503: several SDKs honour it on any status (reference section 7)."""
    message = error.message or HTTPStatus(error.status_code).phrase.lower()
    headers = {"X-Sentry-Error": message[:200]}
    wait = retry_after(error)
    if wait is not None:
        headers["Retry-After"] = str(wait)
    if isinstance(error, RateLimited):
        headers["X-Sentry-Rate-Limits"] = getattr(error, "rate_limits", None) or (
            f"{error.retry_after}:error;default:key"
        )
    body = orjson.dumps({"detail": message})
    return Response(
        body, status_code=error.status_code, headers=headers, media_type="application/json"
    )


def _project_id(raw: str) -> int:
    if not raw.isdigit():
        raise BadRequest(f"invalid project id {raw!r}")
    return int(raw)


async def _read_body(request: Request, limit: int) -> bytes:
    """The raw request body, refused with 413 as soon as it passes ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"request body is {declared} bytes; the limit is {limit}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"request body exceeds the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def _off_loop_if_large(size: int, work: Callable[..., T], *args: Any) -> T:
    """``work(*args)`` in a worker thread when the body is large, else right here: a big
    body must not stall every other request, and a thread hop costs more than a small
    body's decompression."""
    if size > OFF_LOOP_BODY_BYTES:
        return await run_in_threadpool(work, *args)
    return work(*args)


async def _authorize(ctx: IngestContext, auth: SentryAuth | None, project_id: int) -> IngestKey:
    if auth is None:
        raise Unauthorized("missing authorization information")
    key = await ctx.keys.get(auth.public_key)
    if key is None:
        raise Unauthorized("unknown public key")
    if key.project_id != project_id:
        raise Unauthorized("the public key does not belong to this project")
    if auth.secret_key is not None and auth.secret_key != key.secret_key:
        raise Unauthorized("invalid secret key")
    if not key.key_active:
        raise Forbidden("the client key is disabled")
    if not key.tracking_active:
        raise Forbidden("error tracking is not active for this project")
    return key


class CategoriesLimited(RateLimited):
    """Every item of the request was in a data category over a limit."""

    def __init__(self, limited: list[Limited]) -> None:
        names = ", ".join(sorted({x.category for x in limited}))
        super().__init__(f"rate limit or quota exceeded for {names}", _longest(limited))
        self.rate_limits = rate_limits_header(limited)


def _longest(limited: list[Limited]) -> int:
    return max(x.retry_after for x in limited)


def _count_refusal(ctx: IngestContext, call: Call, error: TraceboxError) -> None:
    """An authenticated request refused as invalid or too large counts on the usage
    view (rate limits count themselves in the limiter)."""
    reason = {400: "invalid", 413: "too_large"}.get(error.status_code)
    if call.project_id is not None and reason is not None:
        ctx.limiter.refused(call.project_id, "error", reason)


async def _refuse_if_limited(ctx: IngestContext, key: IngestKey) -> None:
    """A store request (one event) over an exhausted limit is refused before its body is
    read. Envelopes are read first: a limit of one category keeps the others."""
    full = await ctx.limiter.exhausted(key, "error")
    if full is not None:
        raise CategoriesLimited([full])


async def _rate_limit(ctx: IngestContext, call: Call, key: IngestKey, out: Accepted) -> None:
    """Count the request's items per data category; drop those of a category over a
    limit (429 if nothing is left, else 200 naming the limited categories)."""
    counts: dict[str, int] = {}  # a dict, not a Counter: this runs for every request
    for record in out.records:
        if (category := category_of(record.kind)) is not None:
            counts[category] = counts.get(category, 0) + 1
    limited = await ctx.limiter.limit(key, counts)
    if not limited:
        return
    refused = {x.category for x in limited}
    out.records = [r for r in out.records if category_of(r.kind) not in refused]
    if not any(category_of(r.kind) for r in out.records):
        raise CategoriesLimited(limited)
    out.events = sum(1 for r in out.records if r.kind is RecordKind.EVENT)
    call.rate_limits = rate_limits_header(limited)


# Sentry's data category of each spool record kind; DROPPED is bookkeeping, never limited.
KIND_CATEGORIES = {
    "event": "error",
    "session": "session",
    "sessions": "session",
    "attachment": "attachment",
    "log": "log_item",
    "client_report": "internal",
    "feedback": "feedback",
    "user_report": "feedback",
}


def category_of(kind: RecordKind) -> str | None:
    if kind is RecordKind.DROPPED:
        return None
    return KIND_CATEGORIES.get(kind.value, "default")


def _query(request: Request) -> Mapping[str, str]:
    """The query string's parameters; most SDKs send none (their credentials are in a
    header), and parsing an empty one still costs a few microseconds per event."""
    return request.query_params if request.scope.get("query_string") else {}


def _origin(request: Request, key: IngestKey, received: float, auth: SentryAuth | None) -> Origin:
    client_ip = request.client.host if request.client else None
    client = (auth.client if auth else None) or request.headers.get("user-agent")
    return Origin(key.project_id, key.key_id, received, client_ip, client)


def _decode_store(body: bytes, encoding: str | None, max_bytes: int) -> tuple[bytes, bool]:
    """The event's JSON, and whether it is the body's decompression itself (not base64)."""
    data = decompress(body, encoding, max_bytes=max_bytes)
    event = decode_store_body(data, max_bytes=max_bytes)
    return event, event is data


def _frame_envelope(body: bytes, encoding: str | None, s: Settings) -> Envelope:
    data = decompress(body, encoding, max_bytes=s.max_envelope_decompressed_bytes)
    return parse_envelope(data, max_items=s.max_items_per_envelope)


async def _handle_store(
    ctx: IngestContext, request: Request, call: Call, project_id: int
) -> Accepted:
    s, received = ctx.settings, time.time()
    auth = auth_from_request(request.headers, _query(request))
    key = await _authorize(ctx, auth, project_id)
    call.project_id = key.project_id
    await _refuse_if_limited(ctx, key)
    body = await _read_body(request, s.max_store_compressed_bytes)
    encoding = request.headers.get("content-encoding")
    data, as_is = await _off_loop_if_large(
        len(body), _decode_store, body, encoding, s.max_store_bytes
    )
    gzip_body = body if as_is and is_gzip(encoding) else None
    accepted = process_store(data, _origin(request, key, received, auth), gzip_body)
    await _rate_limit(ctx, call, key, accepted)
    return accepted


async def _handle_envelope(
    ctx: IngestContext, request: Request, call: Call, project_id: int
) -> Accepted:
    """Credentials of the request itself are checked before its body is read; the
    envelope's ``dsn`` header is a fallback for clients that send no other (and must
    agree with the request's when both are sent). Limits are counted per data category
    once the items are known: an envelope limited for events keeps its sessions."""
    s, received = ctx.settings, time.time()
    auth = auth_from_request(request.headers, _query(request))
    key = await _authorize(ctx, auth, project_id) if auth is not None else None
    if key is not None:
        call.project_id = key.project_id
    body = await _read_body(request, s.max_envelope_bytes)
    encoding = request.headers.get("content-encoding")
    envelope = await _off_loop_if_large(len(body), _frame_envelope, body, encoding, s)
    dsn_auth = _envelope_auth(envelope.headers.get("dsn"), project_id)
    if key is None:
        key = await _authorize(ctx, dsn_auth, project_id)
    elif dsn_auth is not None and auth is not None and dsn_auth.public_key != auth.public_key:
        raise Unauthorized("public key mismatch between the envelope dsn and the request")
    call.project_id = key.project_id
    origin = _origin(request, key, received, auth or dsn_auth)
    accepted = process_envelope(envelope, s, origin, body if is_gzip(encoding) else None)
    await _rate_limit(ctx, call, key, accepted)
    return accepted


def _envelope_auth(dsn: object, project_id: int) -> SentryAuth | None:
    """The credentials of the envelope header ``dsn``, which must name this project."""
    if not isinstance(dsn, str) or not dsn:
        return None
    dsn_auth, dsn_project = auth_from_envelope_dsn(dsn)
    if dsn_project != str(project_id):
        raise BadRequest("project id mismatch between the envelope dsn and the request")
    return dsn_auth
