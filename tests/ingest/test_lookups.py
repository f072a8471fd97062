"""Lookups of the request path renewed before they expire (``ingest.lookups``): a
project's limits, and a failed lookup nobody waited for."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError

from tests.ingest.test_key_cache import Clock
from tracebox.ingest.counters import SharedCounters
from tracebox.ingest.lookups import Lookups
from tracebox.ingest.ratelimit import Limiter, LimiterSettings
from tracebox.store.quotas import ProjectLimits, Quota

TTL = 2.0


def test_a_projects_limits_are_renewed_before_they_expire_and_no_request_waits(
    tmp_path: Path,
) -> None:
    clock = Clock()
    answers = [ProjectLimits(3), ProjectLimits(3, (Quota("error", 60, 5),))]
    asked: list[int] = []
    renewing = threading.Event()
    release = threading.Event()
    release.set()

    def load(project_id: int) -> ProjectLimits:
        asked.append(project_id)
        if len(asked) > 1:
            renewing.set()
        assert release.wait(30)
        return answers[len(asked) - 1]

    counters = SharedCounters(tmp_path / "c.bin")
    limiter = Limiter(counters, load, LimiterSettings(cache_seconds=TTL), cache_clock=clock)

    async def scenario() -> None:
        assert await limiter.project_limits(3) == answers[0]
        release.clear()  # the database stops answering
        clock.now += TTL * 0.6
        assert await asyncio.wait_for(limiter.project_limits(3), 5) == answers[0]
        assert await asyncio.to_thread(renewing.wait, 30)  # the renewal is under way
        renewal = limiter._lookups.start(3)  # the one running: not a new one
        release.set()
        await renewal
        assert await limiter.project_limits(3) == answers[1]
        assert asked == [3, 3]

    try:
        asyncio.run(scenario())
    finally:
        counters.close()


def test_limits_last_known_are_used_while_the_database_is_down(tmp_path: Path) -> None:
    clock = Clock()
    known = ProjectLimits(3, (Quota("error", 60, 5),))
    down = False
    asked: list[int] = []

    def load(project_id: int) -> ProjectLimits:
        asked.append(project_id)
        if down:
            raise OperationalError("SELECT", {}, Exception("connection refused"))
        return known

    counters = SharedCounters(tmp_path / "c.bin")
    limiter = Limiter(counters, load, LimiterSettings(cache_seconds=TTL), cache_clock=clock)

    async def scenario() -> None:
        nonlocal down
        assert await limiter.project_limits(3) == known
        down = True
        clock.now += TTL * 0.6  # a renewal fails in the background: the answer stands
        assert await limiter.project_limits(3) == known
        await asyncio.wait([limiter._lookups.start(3)])  # the renewal, done
        clock.now += TTL * 0.2  # and is not tried again before the answer expires
        assert await limiter.project_limits(3) == known
        assert 3 not in limiter._lookups._running and asked == [3, 3]
        clock.now += TTL  # expired: the request waits, the lookup fails, the last known stays
        assert await limiter.project_limits(3) == known
        assert asked == [3, 3, 3]
        assert await limiter.project_limits(4) == ProjectLimits(4)  # never known: none

    try:
        asyncio.run(scenario())
    finally:
        counters.close()


def test_a_failed_lookup_nobody_waited_for_is_not_reported_as_unretrieved(
    caplog: pytest.LogCaptureFixture,
) -> None:
    answered: list[object] = []

    def load(key: str) -> str:
        raise OperationalError("SELECT", {}, Exception("connection refused"))

    async def scenario() -> None:
        lookups: Lookups[str, str] = Lookups(load, lambda *a: answered.append(a), Clock())
        running = lookups.start("k")
        await asyncio.wait([running])
        del running

    asyncio.run(scenario())
    assert answered == []
    assert "exception was never retrieved" not in caplog.text
