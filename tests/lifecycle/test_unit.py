"""The cleanup unit as the supervisor runs it: it works, beats, and stops on request."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

import pytest

from tests.helpers import free_port, wait_for
from tests.lifecycle.helpers import DAY, event, event_ids, project, store
from tracebox.config import Settings
from tracebox.lifecycle import cleanup
from tracebox.lifecycle.unit import run_unit
from tracebox.store import Database


@dataclass
class Context:
    settings: Settings
    db: Database
    stop: threading.Event = field(default_factory=threading.Event)
    beats: list[float] = field(default_factory=list)

    def beat(self) -> None:
        self.beats.append(time.monotonic())


def test_the_unit_applies_retention_beats_and_stops(db: Database, settings: Settings) -> None:
    p = project(db, "acme/web")
    store(db, p, *[event(f"e{i}") for i in range(5)], at=time.time() - 100 * DAY)
    store(db, p, event("recent"))
    ctx = Context(settings, db)
    thread = threading.Thread(target=run_unit, args=(ctx,))
    thread.start()
    try:
        wait_for(lambda: len(event_ids(db, p)) == 1)
        wait_for(lambda: len(ctx.beats) > 2)
    finally:
        ctx.stop.set()
        thread.join(30)
    assert not thread.is_alive()


def test_a_database_outage_is_one_logged_episode_not_a_crash_loop(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    # Nothing listens on this port: every step fails as during a PostgreSQL outage.
    down = Database(f"postgresql://postgres@127.0.0.1:{free_port()}/postgres")
    ctx = Context(settings, down)
    loop = cleanup.CleanupLoop(down, settings, beat=ctx.beat)
    thread = threading.Thread(target=loop.run, args=(ctx.stop,))
    with caplog.at_level(logging.WARNING, logger="tracebox.lifecycle"):
        thread.start()
        try:
            wait_for(lambda: len(ctx.beats) >= 2, timeout=30)  # failed twice, still alive
        finally:
            ctx.stop.set()
            thread.join(30)
            down.dispose()
    assert not thread.is_alive()
    lines = [r for r in caplog.records if r.name == "tracebox.lifecycle"]
    assert len(lines) == 1 and "database unavailable" in lines[0].getMessage()
    assert not lines[0].exc_info  # no traceback
