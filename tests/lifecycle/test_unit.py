"""The cleanup unit as the supervisor runs it: it works, beats, and stops on request."""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from dataclasses import dataclass, field

import orjson
import pytest

from tests.helpers import free_port, wait_for
from tests.lifecycle.helpers import DAY, event, event_ids, project, store
from tracebox.config import Settings
from tracebox.lifecycle import cleanup
from tracebox.lifecycle.unit import run_unit
from tracebox.spool import progress
from tracebox.spool.format import FILE_HEADER_BYTES, SEGMENT_SUFFIX
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


def _spool_with_backlog(settings: Settings, *, digested_at: float, published_at: float) -> None:
    """One segment with undigested records, last drained at ``digested_at``."""
    spool = settings.spool_dir
    spool.mkdir(parents=True, exist_ok=True)
    name = f"{int((digested_at - 60) * 1e9):020d}-test{SEGMENT_SUFFIX}"
    (spool / name).write_bytes(b"\0" * (FILE_HEADER_BYTES + 4096))
    state = {
        "positions": {name: FILE_HEADER_BYTES},
        "drained_at": {name: digested_at},
        "published_at": published_at,
    }
    (spool / progress.PROGRESS_FILE).write_bytes(orjson.dumps(state))


def test_cleanup_gives_way_to_a_running_digest_that_is_behind(
    db: Database, settings: Settings
) -> None:
    loop = cleanup.CleanupLoop(db, settings)
    now = time.time()
    assert not loop._digest_behind()  # no spool yet
    _spool_with_backlog(settings, digested_at=now - 0.5, published_at=now)
    assert not loop._digest_behind()  # half a second behind: keeping up
    _spool_with_backlog(settings, digested_at=now - 10, published_at=now)
    assert loop._digest_behind()
    # The same backlog with no digest running (it published nothing for minutes): there
    # is no one to give way to, so a manual `tracebox cleanup` is not slowed down.
    _spool_with_backlog(settings, digested_at=now - 600, published_at=now - 300)
    assert not loop._digest_behind()
    assert loop.batches()._behind is not None
    quiet = cleanup.CleanupLoop(db, dataclasses.replace(settings, cleanup_yield_lag_seconds=0))
    assert quiet.batches()._behind is None
