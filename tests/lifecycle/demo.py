"""Storage demo data for the screenshots: a month of usage (accepted, refused, expired,
deleted, dropped by the SDKs), quotas, retention, a finished privacy deletion."""

from __future__ import annotations

import random
import time

from tracebox.config import Settings
from tracebox.lifecycle import deletion as deletions
from tracebox.lifecycle.deletion import UserField, user_target
from tracebox.store import Database, client_keys, projects, quotas, retention, usage
from tracebox.store import digest as store_digest
from tracebox.store.audit import Author
from tracebox.store.deletion import JobKind
from tracebox.store.quotas import Quota, SpikeProtection

DAY = 86400


def add(db: Database, settings: Settings, project_id: int, *, seed: int = 13) -> None:
    rng = random.Random(seed)
    hour = int(time.time() // 3600)
    counts: dict[tuple[int, int, str, str, str], int] = {}
    for back in range(30 * 24):
        h = hour - back
        base = 40 + int(30 * rng.random()) + (120 if back % 24 in range(8, 18) else 0)
        counts[(project_id, h, "error", "accepted", "")] = base
        if back < 3 * 24 and rng.random() < 0.3:
            counts[(project_id, h, "error", "refused", "quota")] = rng.randrange(20, 400)
        if rng.random() < 0.05:
            counts[(project_id, h, "error", "refused", "invalid")] = rng.randrange(1, 4)
        if back % 24 == 3:
            counts[(project_id, h, "error", "expired", "age")] = rng.randrange(800, 1500)
            counts[(project_id, h, "error", "expired", "count")] = rng.randrange(50, 200)
        if rng.random() < 0.1:
            counts[(project_id, h, "error", "client_discarded", "queue_overflow")] = rng.randrange(
                1, 30
            )
        if back < 2 * 24 and rng.random() < 0.2:
            counts[(project_id, h, "error", "client_discarded", "ratelimit_backoff")] = (
                rng.randrange(10, 90)
            )
        counts[(project_id, h, "session", "accepted", "")] = base * 3
    with db.write() as conn:
        usage.count_outcomes(conn, counts)
        store_digest.add_dropped(
            conn, {(project_id, "transaction"): 3104, (project_id, "profile"): 212}
        )
        key = client_keys.list_for_project(conn, project_id, limit=1)
        limits = [Quota("error", 60, 600), Quota("error", 86400, 200_000)]
        if key:
            limits.append(Quota("error", 3600, 5_000, key_id=key[0].id))
        quotas.put(conn, project_id, limits, SpikeProtection(True, 10))
        retention.put(conn, project_id, max_age_days=30, max_events_per_error=None)
        project = projects.get(conn, project_id)
    assert project is not None
    root = Author(1, "root")
    deletions.delete(
        db, settings, project, JobKind.USER, user_target(UserField.EMAIL, "ann@example.com"), root
    )
