"""Rate limits, quotas and spike protection, per data category, as Sentry's.

Per request, ``Limiter.limit`` counts each data category's items (error, session,
attachment, ...) against every limit that applies to it: the instance's per-key rate
(``TRACEBOX_RATE_LIMIT_EVENTS_PER_MINUTE``, errors), the project's and the client key's
quotas per minute, hour and day, and spike protection. A category over any limit is
refused whole and named in ``X-Sentry-Rate-Limits``; the others go through (an envelope
limited for events keeps its sessions). Counters live in ``counters.SharedCounters``,
so the limits hold across every web worker of a node; with several nodes each enforces
``1/TRACEBOX_QUOTA_NODES`` of a limit (docs/storage.md).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from sqlalchemy.exc import SQLAlchemyError

from tracebox.ingest.counters import NEVER, Check, SharedCounters, window_key
from tracebox.ingest.lookups import Lookups, refresh_at
from tracebox.models import IngestKey
from tracebox.store import Database, quotas
from tracebox.store.quotas import ProjectLimits, Quota

log = logging.getLogger("tracebox.ingest")

MINUTE, HOUR = 60, 3600


@dataclass(frozen=True)
class Limited:
    """A data category refused for this request, and for how long the SDK should wait."""

    category: str
    retry_after: int
    scope: str  # key or project
    reason: str  # rate_limit, quota or spike_protection


@dataclass(frozen=True)
class LimiterSettings:
    key_events_per_minute: int = 0  # the instance's per-key rate limit; 0: none
    nodes: int = 1  # each node enforces ceil(limit / nodes)
    spike_min_per_minute: int = 120  # spike protection never limits below this
    spike_seconds: int = 3600  # how long a detected spike keeps its limit
    cache_seconds: float = 2.0  # how long a project's limits are reused


def rate_limits_header(limited: list[Limited]) -> str:
    """``X-Sentry-Rate-Limits``: ``retry_after:categories:scope``, one per limit (Relay's
    ``format_rate_limits``, without the optional reason code). Events are
    ``error;default``: SDKs file a message event under ``default``, the same limit here."""
    return ", ".join(
        f"{x.retry_after}:{_HEADER_CATEGORIES.get(x.category, x.category)}:{x.scope}"
        for x in limited
    )


_HEADER_CATEGORIES = {"error": "error;default"}


class Limiter:
    def __init__(
        self,
        counters: SharedCounters,
        limits: Callable[[int], ProjectLimits],
        settings: LimiterSettings,
        *,
        clock: Callable[[], float] = time.time,
        cache_clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.counters = counters
        self.settings = settings
        self._clock = clock  # the limits' windows
        self._cache_clock = cache_clock  # the cached limits' age
        self._cache: dict[int, _Cached] = {}
        self._lookups: Lookups[int, ProjectLimits] = Lookups(limits, self._answered, cache_clock)

    @classmethod
    def for_database(
        cls, db: Database, counters: SharedCounters, settings: LimiterSettings
    ) -> Limiter:
        def load(project_id: int) -> ProjectLimits:
            with db.read() as conn:
                return quotas.get(conn, project_id)

        return cls(counters, load, settings)

    async def limit(self, key: IngestKey, counts: Mapping[str, int]) -> list[Limited]:
        """Count the request's items per category; return the categories refused (their
        items must be dropped; their refusal is counted here)."""
        limits = await self.project_limits(key.project_id)
        now = self._clock()
        refused = []
        for category, n in counts.items():
            checks = self._checks(key, limits, category, now)
            if n <= 0 or not checks:
                continue
            over = self.counters.admit(checks, n, now)
            if over is None:
                continue
            if over.reason == "spike_protection":
                self._remember_spike(key.project_id, over.limit, now)
            self.counters.refused(key.project_id, category, over.reason, n, now)
            refused.append(Limited(category, over.retry_after, over.scope, over.reason))
        return refused

    async def exhausted(self, key: IngestKey, category: str) -> Limited | None:
        """A limit of ``category`` with no room left at all (counts nothing): lets the
        store endpoint refuse a flood before reading its body."""
        limits = await self.project_limits(key.project_id)
        now = self._clock()
        full = self.counters.full(self._checks(key, limits, category, now), now)
        return Limited(category, full.retry_after, full.scope, full.reason) if full else None

    def refused(self, project_id: int, category: str, reason: str, n: int = 1) -> None:
        """Count a refusal decided elsewhere (invalid, too_large) for the usage view."""
        self.counters.refused(project_id, category, reason, n, self._clock())

    # --- which limits apply ------------------------------------------------------------

    def _checks(
        self, key: IngestKey, limits: ProjectLimits, category: str, now: float
    ) -> list[Check]:
        checks = []
        per_key = self.settings.key_events_per_minute
        if per_key and category == "error":
            checks.append(self._window(("rate", key.key_id), per_key, MINUTE, now, "rate_limit"))
        for q in limits.quotas:
            if q.category == category and q.key_id in (None, key.key_id):
                checks.append(self._quota(key.project_id, q, now))
        if limits.spike.enabled and category == "error":
            checks += self._spike(key.project_id, limits.spike.multiplier, now)
        return checks

    def _quota(self, project_id: int, q: Quota, now: float) -> Check:
        scope = ("key", q.key_id) if q.key_id is not None else ("project", project_id)
        check = self._window(
            ("quota", *scope, q.category), q.max_count, q.window_seconds, now, "quota"
        )
        return Check(check.key, check.limit, check.expires, check.retry_after, "quota", scope[0])

    def _window(
        self, name: tuple[object, ...], limit: int, seconds: int, now: float, reason: str
    ) -> Check:
        index = int(now // seconds)
        end = (index + 1) * seconds
        return Check(
            key=window_key(*name, seconds, index),
            limit=math.ceil(limit / self.settings.nodes),
            expires=end,
            retry_after=max(1, math.ceil(end - now)),
            reason=reason,
            scope="key" if name[0] == "rate" else "project",
        )

    def _spike(self, project_id: int, multiplier: float, now: float) -> list[Check]:
        """A minute may hold ``multiplier`` times the trailing hour's rate per minute (at
        least ``spike_min_per_minute``); once exceeded, that limit holds for
        ``spike_seconds``. The hour counter is kept an hour longer: the next hour's
        baseline."""
        hour = int(now // HOUR)
        frozen = self.counters.count(window_key("spike-state", project_id), now)
        if frozen:
            limit = frozen
        else:
            previous = self.counters.count(window_key("spike-hour", project_id, hour - 1), now)
            rate = multiplier * previous / 60 / self.settings.nodes
            limit = max(
                math.ceil(self.settings.spike_min_per_minute / self.settings.nodes), int(rate)
            )
        minute = self._window(("spike", project_id), NEVER, MINUTE, now, "spike_protection")
        hour_key = window_key("spike-hour", project_id, hour)
        return [
            Check(
                minute.key, limit, minute.expires, minute.retry_after, "spike_protection", "project"
            ),
            Check(hour_key, NEVER, (hour + 2) * HOUR, 1, "spike_protection", "project"),
        ]

    def _remember_spike(self, project_id: int, limit: int, now: float) -> None:
        key = window_key("spike-state", project_id)
        if not self.counters.count(key, now):
            log.warning(
                "project %d: spike protection limits it to %d events a minute", project_id, limit
            )
            self.counters.put(key, limit, int(now) + self.settings.spike_seconds, now)

    # --- a project's limits, cached -------------------------------------------------------

    async def project_limits(self, project_id: int) -> ProjectLimits:
        """The project's limits, as the database said at most ``cache_seconds`` ago; a
        project in use has them renewed in the background before then (``lookups``)."""
        now = self._cache_clock()
        cached = self._cache.get(project_id)
        if cached is not None and cached.expires_at > now:
            if now >= cached.refresh_at:
                self._lookups.renew(project_id)  # meanwhile; nobody waits
            return cached.limits
        try:
            return await self._lookups.wait(project_id)  # cached by ``_answered``
        except SQLAlchemyError:
            # The database is down: the limits last known (or none) until it answers,
            # asked again after cache_seconds.
            limits = cached.limits if cached else ProjectLimits(project_id)
            expires = now + self.settings.cache_seconds
            self._cache[project_id] = _Cached(expires, expires, limits)
            return limits

    def _answered(self, project_id: int, limits: ProjectLimits, started: float) -> None:
        ttl = self.settings.cache_seconds
        self._cache[project_id] = _Cached(refresh_at(started, ttl), started + ttl, limits)


class _Cached(NamedTuple):
    """A project's limits as ``Limiter`` keeps them (times on its ``cache_clock``)."""

    refresh_at: float  # from then on, a request renews them in the background
    expires_at: float  # from then on, requests wait for the database's answer
    limits: ProjectLimits
