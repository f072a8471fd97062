"""``GET /-/health`` and ``GET /-/metrics``: how this node is doing, seen by a web worker.

Everything is computed here, from files, not reported by the processes it is about:
the background units' liveness from their heartbeats and pids (``supervisor.heartbeat``),
the digest's lag from the spool's segment files and the positions the digest published
(``spool.progress``). So a dead or stuck digest shows at once, with a lag that keeps
growing, instead of a frozen last value (issue 9).

Health answers 503 when the node cannot do its job: a unit is not alive, the digest is
more than ``TRACEBOX_HEALTH_MAX_LAG_SECONDS`` behind, the spool is full or the disk
nearly full. A database that does not answer is reported but is not a 503 by itself:
ingestion keeps accepting into the spool (the outage buffer), and a load balancer that
took every node out would turn a buffered outage into lost events; the growing lag
turns health to 503 if the outage lasts.
"""

from __future__ import annotations

import time
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tracebox.config import Settings
from tracebox.metrics import Metrics
from tracebox.spool import progress
from tracebox.spool.space import free_bytes
from tracebox.store import Database
from tracebox.supervisor import heartbeat
from tracebox.supervisor.units import UNITS


def health_routes(settings: Settings, db: Database, metrics: Metrics) -> list[Route]:
    async def health(_: Request) -> Response:
        report = await run_in_threadpool(node_report, settings, db)
        status = 200 if report["status"] == "ok" else 503
        return Response(orjson.dumps(report), status_code=status, media_type="application/json")

    async def metrics_endpoint(_: Request) -> Response:
        report = await run_in_threadpool(node_report, settings, None)
        _record(metrics, report)
        return Response(metrics.render(), media_type="text/plain; version=0.0.4")

    return [Route("/-/health", health), Route("/-/metrics", metrics_endpoint)]


def node_report(settings: Settings, db: Database | None) -> dict[str, Any]:
    """The health report; ``db`` None: leave the database out (no query per scrape)."""
    now = time.time()
    backlog = progress.backlog(settings.spool_dir)
    units = {unit.name: _unit(settings, unit.name, now) for unit in UNITS}
    lag = {"seconds": round(backlog.lag_seconds(now), 3), "bytes": backlog.bytes}
    free = _free_bytes(settings)
    spool = {
        "undigested_bytes": backlog.bytes,
        "max_undigested_bytes": settings.spool_max_bytes,
        "disk_bytes": backlog.disk_bytes,
        "free_disk_bytes": free,
        "min_free_disk_bytes": settings.spool_min_free_bytes,
    }
    problems = [f"{name} is not running" for name, u in units.items() if not u["alive"]]
    if lag["seconds"] > settings.health_max_lag_seconds:
        problems.append(
            f"the digest is {lag['seconds']:.0f} s behind "
            f"(more than {settings.health_max_lag_seconds:.0f} s)"
        )
    if backlog.bytes >= settings.spool_max_bytes:
        problems.append("the spool is full")
    if free < settings.spool_min_free_bytes:
        problems.append("the disk is nearly full")
    report: dict[str, Any] = {"status": "unavailable" if problems else "ok"}
    if db is not None:
        report["database"] = db.ping()
    report |= {"problems": problems, "units": units, "digest_lag": lag, "spool": spool}
    return report


def _unit(settings: Settings, name: str, now: float) -> dict[str, Any]:
    beat = heartbeat.read(settings.data_dir, name)
    alive = heartbeat.is_alive(beat, timeout=settings.heartbeat_timeout_seconds, now=now)
    if beat is None:
        return {"alive": False, "state": "not started", "restarts": 0}
    return {
        "alive": alive,
        "state": beat.state if alive or beat.state != "running" else "dead",
        "pid": beat.pid,
        "last_beat_seconds_ago": round(now - beat.at, 3),
        "running_for_seconds": round(now - beat.started_at, 3),
        "restarts": beat.restarts,
        "last_error": beat.error,
    }


def _free_bytes(settings: Settings) -> int:
    try:
        return free_bytes(settings.spool_dir)
    except FileNotFoundError:
        return free_bytes(settings.data_dir) if settings.data_dir.exists() else 0


def _record(metrics: Metrics, report: dict[str, Any]) -> None:
    metrics.digest_lag_bytes.set(report["digest_lag"]["bytes"])
    metrics.digest_lag_seconds.set(report["digest_lag"]["seconds"])
    metrics.spool_disk_bytes.set(report["spool"]["disk_bytes"])
    for name, unit in report["units"].items():
        metrics.unit_up.labels(name).set(1 if unit["alive"] else 0)
        metrics.unit_restarts.labels(name).set(unit["restarts"])
