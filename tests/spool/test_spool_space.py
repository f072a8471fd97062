"""The spool's cap counts undigested bytes, segments finish by size or age, and a nearly
full disk is refused before writing; all recover by themselves (issue 9, defect 2)."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import wait_for
from tracebox import errors
from tracebox.spool import SpoolFull, SpoolReader, SpoolWriter, progress, space
from tracebox.spool.format import FILE_HEADER_BYTES, is_finished
from tracebox.spool.space import DiskFull, free_bytes

MakeWriter = Callable[..., SpoolWriter]


def rec(i: int, size: int = 1000) -> bytes:
    return b"%06d" % i + b"." * (size - 6)


@pytest.fixture(autouse=True)
def measure_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(space, "CAP_REFRESH_S", 0.0)


def digest_all(spool_dir: Path, positions: dict[str, int]) -> dict[str, int]:
    """What the digest does: read everything, publish the positions, release finished files."""
    reader = SpoolReader(spool_dir)
    batch = reader.read(positions, 100_000)
    progress.publish(spool_dir, batch.positions, dict.fromkeys(batch.drained, time.time()))
    reader.release(batch.positions)
    return batch.positions


def test_a_cap_smaller_than_a_segment_keeps_admitting_once_digested(
    make_writer: MakeWriter, spool_dir: Path
) -> None:
    cap = 8 * 1024  # far below the 1 MiB segment: the old cap counted the whole file
    writer = make_writer(segment_bytes=1024 * 1024, max_undigested_bytes=cap)
    writer.start_sync()
    positions: dict[str, int] = {}
    accepted = 0
    for _ in range(10):  # ten times the cap goes through the one live segment
        with pytest.raises(SpoolFull) as full:
            while True:
                writer.append_sync([rec(accepted)])
                accepted += 1
        assert (full.value.status_code, full.value.retry_after) == (503, 30)
        positions = digest_all(spool_dir, positions)
    assert accepted >= 10 * (cap // 1008 - 1)
    [live] = list(spool_dir.glob("*.seg"))
    assert live.stat().st_size > 5 * cap  # still one live segment, mostly digested


def test_a_spool_full_episode_is_logged_once_when_it_starts_and_once_when_it_ends(
    make_writer: MakeWriter, spool_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    writer = make_writer(max_undigested_bytes=4 * 1024)
    writer.start_sync()
    caplog.set_level(logging.WARNING, "tracebox.spool")
    accepted = 0
    with pytest.raises(SpoolFull):
        while True:
            writer.append_sync([rec(accepted)])
            accepted += 1
    for i in range(49):  # fifty refusals in all
        with pytest.raises(SpoolFull):
            writer.append_sync([rec(1000 + i)])
    [start] = [r.getMessage() for r in caplog.records]  # one line for fifty refusals
    assert start.startswith("spool full, answering 503: spool is full (")
    assert "undigested bytes; the cap is 4096)" in start

    digest_all(spool_dir, {})  # the digest caught up: the next write is admitted
    writer.append_sync([rec(99)])
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert re.fullmatch(r"spool full, answering 503: over after \d+ s \(50 times\)", messages[1])
    writer.append_sync([rec(100)])  # admitted again: nothing more is logged
    assert len(caplog.records) == 2


def test_an_event_bigger_than_the_cap_goes_through_when_nothing_is_pending(
    make_writer: MakeWriter, spool_dir: Path
) -> None:
    writer = make_writer(max_undigested_bytes=500)
    writer.start_sync()
    writer.append_sync([rec(0, size=2000)])  # nothing undigested: admitted
    with pytest.raises(SpoolFull):
        writer.append_sync([rec(1, size=10)])
    digest_all(spool_dir, {})
    writer.append_sync([rec(2, size=2000)])


def test_an_idle_segment_is_finished_by_age_and_then_deleted(
    make_writer: MakeWriter, spool_dir: Path
) -> None:
    writer = make_writer(segment_max_age_s=0.2)
    writer.start_sync()
    writer.append_sync([rec(0)])
    [segment] = list(spool_dir.glob("*.seg"))
    positions = digest_all(spool_dir, {})
    assert segment.exists()  # consumed, but live: not deleted yet

    def finished() -> bool:
        with open(segment, "rb") as file:
            return is_finished(file.fileno())

    wait_for(finished, timeout=10)  # no more records came: finished by age alone
    assert SpoolReader(spool_dir).release(positions) == [segment.name]
    writer.append_sync([rec(1)])  # the next records start a new segment
    assert len(list(spool_dir.glob("*.seg"))) == 1


def test_a_nearly_full_disk_is_refused_before_writing_and_recovers(
    make_writer: MakeWriter, spool_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spool_dir.mkdir()
    # More than is free ("nearly full"), by far more than other processes may free
    # meanwhile: with 1 MiB, a parallel test deleting its files once made room.
    reserve = free_bytes(spool_dir) + (1 << 40)
    writer = make_writer(min_free_bytes=reserve)
    writer.start_sync()
    before = {p.name: p.stat().st_size for p in spool_dir.glob("*.seg")}
    caplog.set_level(logging.WARNING, "tracebox.spool")
    for i in range(50):
        with pytest.raises(DiskFull) as full:
            writer.append_sync([rec(i)])
    assert isinstance(full.value, errors.Unavailable)
    assert (full.value.status_code, full.value.retry_after) == (503, 30)
    assert {p.name: p.stat().st_size for p in spool_dir.glob("*.seg")} == before
    assert [r.getMessage().split(":")[0] for r in caplog.records] == [
        "disk nearly full, answering 503"
    ]  # one line for fifty refusals

    writer._space._min_free_bytes = 0  # the disk got room again
    writer.append_sync([rec(99)])
    assert caplog.records[-1].getMessage().startswith("disk nearly full, answering 503: over")


def test_backlog_counts_undigested_bytes_and_their_age(
    make_writer: MakeWriter, spool_dir: Path
) -> None:
    writer = make_writer()
    writer.start_sync()
    writer.append_sync([rec(0), rec(1)])
    [segment] = list(spool_dir.glob("*.seg"))
    size = segment.stat().st_size
    nothing_known = progress.backlog(spool_dir)
    assert nothing_known.bytes == size - FILE_HEADER_BYTES
    assert nothing_known.oldest == pytest.approx(progress.created_at(segment.name))

    read_at = time.time()
    positions = digest_all(spool_dir, {})
    assert progress.backlog(spool_dir).bytes == 0
    assert progress.backlog(spool_dir).lag_seconds(time.time()) == 0
    writer.append_sync([rec(2)])
    later = progress.backlog(spool_dir)
    assert later.bytes == segment.stat().st_size - positions[segment.name] == 1008
    assert later.oldest is not None and read_at <= later.oldest <= time.time()
    assert later.disk_bytes == segment.stat().st_size
