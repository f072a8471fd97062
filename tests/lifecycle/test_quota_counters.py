"""Shared ingest counters and the limiter: limits at and past their value, per data
category, per project and client key, spike protection, and exact counts across
processes sharing one counter file."""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from pathlib import Path

from tests.lifecycle.helpers import project
from tracebox.config import Settings
from tracebox.ingest.counters import Check, SharedCounters, window_key
from tracebox.ingest.ratelimit import Limited, Limiter, LimiterSettings, rate_limits_header
from tracebox.lifecycle import report
from tracebox.lifecycle.cleanup import CleanupLoop
from tracebox.models import IngestKey
from tracebox.store import Database
from tracebox.store.quotas import ProjectLimits, Quota, SpikeProtection

NOW = 1_800_000_000.0  # a whole hour, day and minute
KEY = IngestKey(7, 3, "p" * 32, "s" * 32, True, True)


def check(limit: int, name: str = "q") -> Check:
    return Check(window_key(name), limit, int(NOW) + 60, 60, "quota", "project")


def test_a_window_admits_up_to_its_limit_and_then_refuses(tmp_path: Path) -> None:
    counters = SharedCounters(tmp_path / "c.bin")
    limit = check(10)
    assert counters.admit([limit], 9, NOW) is None
    assert counters.admit([limit], 1, NOW) is None  # exactly at the limit
    assert counters.admit([limit], 1, NOW) == limit  # past it
    assert counters.count(limit.key, NOW) == 10
    assert counters.count(limit.key, NOW + 60) == 0  # the window passed: the slot is free


def test_a_refused_admission_counts_nothing_against_any_limit(tmp_path: Path) -> None:
    counters = SharedCounters(tmp_path / "c.bin")
    loose, tight = check(100, "loose"), check(5, "tight")
    assert counters.admit([loose, tight], 6, NOW) == tight
    assert counters.count(loose.key, NOW) == 0


def test_refusals_are_drained_once_per_project_hour_category_and_reason(tmp_path: Path) -> None:
    counters = SharedCounters(tmp_path / "c.bin")
    counters.refused(3, "error", "quota", 4, NOW)
    counters.refused(3, "error", "quota", 1, NOW + 10)
    counters.refused(3, "session", "rate_limit", 2, NOW)
    counters.refused(9, "error", "too_large", 1, NOW + 3600)
    hour = int(NOW // 3600)
    assert counters.drain_refused(NOW + 3600) == {
        (3, hour, "error", "quota"): 5,
        (3, hour, "session", "rate_limit"): 2,
        (9, hour + 1, "error", "too_large"): 1,
    }
    assert counters.drain_refused(NOW + 3600) == {}


def _admit_many(path: str, attempts: int, results: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    counters = SharedCounters(Path(path))
    admitted = sum(counters.admit([check(500)], 1, NOW) is None for _ in range(attempts))
    results.put(admitted)


def test_processes_sharing_the_file_admit_exactly_the_limit(tmp_path: Path) -> None:
    path = str(tmp_path / "c.bin")
    SharedCounters(Path(path)).close()
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    procs = [context.Process(target=_admit_many, args=(path, 400, results)) for _ in range(2)]
    for p in procs:
        p.start()
    admitted = [results.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(30)
    assert sum(admitted) == 500 and min(admitted) > 0


def limiter(tmp_path: Path, limits: ProjectLimits, **settings: int) -> tuple[Limiter, list[float]]:
    clock = [NOW]
    counters = SharedCounters(tmp_path / "c.bin")
    found = Limiter(counters, lambda _: limits, LimiterSettings(**settings), clock=lambda: clock[0])
    return found, clock


def run(limiter: Limiter, **counts: int) -> list[Limited]:
    return asyncio.run(limiter.limit(KEY, counts))


def test_quotas_limit_their_category_only_and_name_it(tmp_path: Path) -> None:
    limits = ProjectLimits(3, (Quota("error", 60, 5), Quota("session", 3600, 100)))
    lim, _ = limiter(tmp_path, limits)
    assert run(lim, error=5, session=1) == []
    refused = run(lim, error=1, session=1)
    assert refused == [Limited("error", 60, "project", "quota")]
    assert rate_limits_header(refused) == "60:error;default:project"
    hour = int(NOW // 3600)
    assert lim.counters.drain_refused(NOW) == {(3, hour, "error", "quota"): 1}


def test_a_client_keys_quota_and_the_instances_per_key_rate(tmp_path: Path) -> None:
    other_key = Quota("error", 86400, 1, key_id=99)
    mine = Quota("error", 86400, 3, key_id=KEY.key_id)
    lim, clock = limiter(tmp_path, ProjectLimits(3, (other_key, mine)), key_events_per_minute=2)
    assert run(lim, error=2) == []
    assert run(lim, error=1) == [Limited("error", 60, "key", "rate_limit")]
    clock[0] += 60  # the next minute: the per-key rate allows more, the day quota one
    assert run(lim, error=1) == []
    assert run(lim, error=1)[0].reason == "quota"


def test_limits_are_shared_out_between_nodes(tmp_path: Path) -> None:
    lim, _ = limiter(tmp_path, ProjectLimits(3, (Quota("error", 60, 10),)), nodes=3)
    assert run(lim, error=4) == []  # ceil(10 / 3) on this node
    assert run(lim, error=1) != []


def test_spike_protection_limits_a_burst_to_a_multiple_of_the_last_hour(tmp_path: Path) -> None:
    limits = ProjectLimits(3, spike=SpikeProtection(enabled=True, multiplier=10))
    lim, clock = limiter(tmp_path, limits, spike_min_per_minute=50)
    for _ in range(60):  # an hour of 30 events a minute (under the floor): 1,800
        assert run(lim, error=30) == []
        clock[0] += 60
    clock[0] += 1800  # half an hour later: 10 x 1,800 / 60 = 300 a minute
    assert run(lim, error=300) == []
    assert run(lim, error=1) == [Limited("error", 60, "project", "spike_protection")]
    clock[0] = NOW + 7200 + 60  # the trailing hour held only the burst, but within the
    assert run(lim, error=300) == []  # spike's hour its limit holds: 300, not 10 x 300 / 60
    assert run(lim, error=1)[0].reason == "spike_protection"
    clock[0] = NOW + 9000 + 60  # the spike's hour is over: the trailing hour's rate again
    assert run(lim, error=50) == [] and run(lim, error=1)[0].reason == "spike_protection"


def test_spike_protection_never_limits_below_its_floor(tmp_path: Path) -> None:
    limits = ProjectLimits(3, spike=SpikeProtection(enabled=True, multiplier=10))
    lim, _ = limiter(tmp_path, limits, spike_min_per_minute=20)
    assert run(lim, error=20) == []  # a new project: no trailing hour, the floor applies
    assert run(lim, error=1) != []


def test_the_cleanup_loop_moves_refusals_into_the_usage_view(
    tmp_path: Path, db: Database, settings: Settings
) -> None:
    p = project(db, "acme/web")
    counters = SharedCounters(tmp_path / "c.bin")
    now = time.time()
    counters.refused(p, "error", "quota", 3, now)
    counters.refused(p, "error", "too_large", 1, now)
    counters.refused(p, "session", "quota", 2, now)
    counters.refused(999_999, "error", "invalid", 1, now)  # no such project: dropped
    cleaner = CleanupLoop(db, settings, counters=counters)

    assert cleaner.flush_refusals() == 7
    assert cleaner.flush_refusals() == 0

    usage = report.project(db, settings, p)
    assert usage.outcomes.refused == {"quota": 3, "too_large": 1}
    assert usage.outcomes.received == 4
    assert usage.outcomes.other_categories == {"session": {"refused:quota": 2}}
