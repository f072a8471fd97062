"""``tracebox cleanup --dry-run`` shows what would go; ``tracebox cleanup`` removes it;
``tracebox stats`` shows the usage and the disk budget."""

from __future__ import annotations

import time

from tests.helpers import cli
from tests.lifecycle.helpers import DAY, event, event_ids, project, store
from tracebox.config import Settings
from tracebox.store import Database


def test_cleanup_dry_run_then_for_real(db: Database, settings: Settings) -> None:
    p = project(db, "acme/web")
    now = time.time()
    store(db, p, *[event("old") for _ in range(3)], at=now - 120 * DAY)
    # one error of 1,008 events: its first and its latest 1,000 stay, 7 go
    store(db, p, *[event("hot") for _ in range(8)], at=now - 3600)
    store(db, p, *[event("hot") for _ in range(1000)], at=now - 60)

    plan = cli(settings, "cleanup", "--dry-run")
    assert plan["projects"] == [
        {
            "project": "acme/web",
            "max_age_days": 90,
            "max_events_per_error": 1000,
            "events": 1011,
            "by_age": 3,
            "by_count": 7,
        }
    ]
    assert len(event_ids(db, p)) == 1011  # nothing removed yet

    done = cli(settings, "cleanup")
    assert done["removed"] == {"age": 3, "count": 7, "disk_budget": 0}
    assert len(event_ids(db, p)) == 1001
    assert done["lock"]["longest_ms"] > 0

    stats = cli(settings, "stats")
    assert stats["storage"]["stored"][0]["kind"] == "events"
    assert stats["storage"]["stored"][0]["items"] == 1001
    assert stats["storage"]["outcomes"]["expired"] == {"age": 3, "count": 7}
    assert stats["storage"]["largest"][0]["path"] == "acme/web"
