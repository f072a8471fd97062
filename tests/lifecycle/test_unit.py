"""The cleanup unit as the supervisor runs it: it works, beats, and stops on request."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from tests.helpers import wait_for
from tests.lifecycle.helpers import DAY, event, event_ids, project, store
from tracebox.config import Settings
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
