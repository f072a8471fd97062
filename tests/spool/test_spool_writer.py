from __future__ import annotations

import asyncio
import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import FsyncGate
from tracebox import errors
from tracebox.spool import SpoolFull, SpoolReader, SpoolWriter, segment, space, spool_bytes
from tracebox.spool.format import FILE_HEADER_BYTES, frame

MakeWriter = Callable[..., SpoolWriter]
Drain = Callable[..., tuple[list[bytes], dict[str, int]]]


def rec(i: int, size: int = 100) -> bytes:
    return b"%06d" % i + b"." * (size - 6)


def test_round_trip_keeps_order(make_writer: MakeWriter, spool_dir: Path, drain: Drain) -> None:
    async def scenario() -> None:
        writer = make_writer()
        await writer.start()
        await writer.append([rec(0), rec(1)])
        await writer.append([b""])
        await writer.append([rec(2)])
        await writer.close()

    asyncio.run(scenario())
    records, positions = drain(SpoolReader(spool_dir))
    assert records == [rec(0), rec(1), b"", rec(2)]
    [name] = positions
    assert positions[name] == (spool_dir / name).stat().st_size


def test_concurrent_appends_are_durable_and_share_fsyncs(
    make_writer: MakeWriter, spool_dir: Path, drain: Drain, monkeypatch: pytest.MonkeyPatch
) -> None:
    fsyncs = 0
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        nonlocal fsyncs
        fsyncs += 1
        real_fsync(fd)

    async def scenario() -> None:
        writer = make_writer()
        await writer.start()
        monkeypatch.setattr(os, "fsync", counting_fsync)
        await asyncio.gather(*(writer.append([rec(i)]) for i in range(1000)))
        monkeypatch.setattr(os, "fsync", real_fsync)
        await writer.close()

    asyncio.run(scenario())
    records, _ = drain(SpoolReader(spool_dir))
    assert sorted(records) == [rec(i) for i in range(1000)]
    assert 1 <= fsyncs <= 100, f"{fsyncs} fsyncs for 1000 appends"


def test_each_call_is_contiguous_when_calls_run_concurrently(
    make_writer: MakeWriter, spool_dir: Path, drain: Drain
) -> None:
    calls = [[rec(call * 10 + i) for i in range(call % 5 + 1)] for call in range(200)]

    async def scenario() -> None:
        writer = make_writer()
        await writer.start()
        await asyncio.gather(*(writer.append(call) for call in calls))
        await writer.close()

    asyncio.run(scenario())
    records, _ = drain(SpoolReader(spool_dir))
    for call in calls:
        start = records.index(call[0])
        assert records[start : start + len(call)] == call


def test_rotation_and_release(
    make_writer: MakeWriter,
    spool_dir: Path,
    drain: Drain,
    segments: Callable[[Path], list[Path]],
) -> None:
    writer = make_writer(segment_bytes=4096)
    writer.start_sync()
    for i in range(100):
        writer.append_sync([rec(i, size=500)])
    files = segments(spool_dir)
    assert len(files) > 10
    assert all(f.stat().st_size <= 4096 for f in files)

    reader = SpoolReader(spool_dir)
    records, positions = drain(reader, batch=7)
    assert records == [rec(i, size=500) for i in range(100)]
    # The writer still holds its last segment open: only the rotated ones go.
    released = reader.release(positions)
    assert released == [f.name for f in files[:-1]]
    assert segments(spool_dir) == files[-1:]

    writer.close_sync()
    assert reader.release(positions) == [files[-1].name]
    assert segments(spool_dir) == []


def test_release_keeps_unconsumed_segments(
    make_writer: MakeWriter, spool_dir: Path, segments: Callable[[Path], list[Path]]
) -> None:
    writer = make_writer(segment_bytes=1024)
    writer.start_sync()
    for i in range(10):
        writer.append_sync([rec(i, size=600)])
    writer.close_sync()
    reader = SpoolReader(spool_dir)
    batch = reader.read({}, 3)
    assert len(reader.release(batch.positions)) == 3
    assert len(segments(spool_dir)) == 7


def test_spool_full_at_the_cap_and_recovery(
    make_writer: MakeWriter, spool_dir: Path, drain: Drain, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(space, "CAP_REFRESH_S", 0.0)  # measure the directory every time
    cap = 32 * 1024
    writer = make_writer(segment_bytes=4096, max_undigested_bytes=cap)
    writer.start_sync()
    accepted = 0
    with pytest.raises(SpoolFull) as full:
        while True:
            writer.append_sync([rec(accepted, size=1000)])
            accepted += 1
    assert isinstance(full.value, errors.Unavailable)
    assert (full.value.status_code, full.value.retry_after) == (503, 30)
    assert cap - 2000 < spool_bytes(spool_dir) <= cap

    reader = SpoolReader(spool_dir)
    records, positions = drain(reader)
    assert records == [rec(i, size=1000) for i in range(accepted)]
    assert reader.release(positions)
    writer.append_sync([rec(accepted, size=1000)])
    assert drain(reader, positions)[0] == [rec(accepted, size=1000)]


def test_cap_is_cached_between_measurements(
    make_writer: MakeWriter, spool_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(space, "CAP_REFRESH_S", 3600.0)
    writer = make_writer(max_undigested_bytes=10_000)
    writer.start_sync()
    writer.append_sync([rec(0, size=4000)])
    # Bytes written by other processes are seen only at the next measurement, but this
    # writer's own writes are counted at once.
    (spool_dir / "00000000000000000000-other-1-000001.seg").write_bytes(b"x" * 5000)
    writer.append_sync([rec(1, size=4000)])
    with pytest.raises(SpoolFull):
        writer.append_sync([rec(2, size=4000)])


def _fail_once(monkeypatch: pytest.MonkeyPatch, partial: bool) -> None:
    real_write_all = segment._write_all
    failed = False

    def write_all(fd: int, data: bytes) -> None:
        nonlocal failed
        if failed or len(data) == FILE_HEADER_BYTES:
            real_write_all(fd, data)
            return
        failed = True
        if partial:
            real_write_all(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(segment, "_write_all", write_all)


@pytest.mark.parametrize("partial", [False, True], ids=["nothing-written", "half-written"])
def test_disk_error_is_unavailable_and_the_writer_recovers(
    make_writer: MakeWriter,
    spool_dir: Path,
    drain: Drain,
    segments: Callable[[Path], list[Path]],
    monkeypatch: pytest.MonkeyPatch,
    partial: bool,
) -> None:
    async def scenario() -> None:
        writer = make_writer()
        await writer.start()
        await writer.append([rec(0)])
        _fail_once(monkeypatch, partial)
        with pytest.raises(errors.Unavailable) as failure:
            await writer.append([rec(1), rec(2)])
        assert not isinstance(failure.value, SpoolFull)
        await writer.append([rec(3)])
        await writer.close()

    asyncio.run(scenario())
    first, _ = segments(spool_dir)  # the failed segment was abandoned, cut back to rec(0)
    assert first.stat().st_size == FILE_HEADER_BYTES + len(frame([rec(0)]))
    records, positions = drain(SpoolReader(spool_dir))
    assert records == [rec(0), rec(3)]
    assert len(SpoolReader(spool_dir).release(positions)) == 2


def test_an_append_waiting_for_its_fsync_no_longer_holds_its_records(
    make_writer: MakeWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Framed, the records are not held a second time while the fsync is awaited (many
    requests wait at once when the disk stalls)."""
    gate = FsyncGate()

    async def scenario() -> tuple[int, int]:
        writer = make_writer()
        await writer.start()
        records = [rec(0), rec(1)]
        alone = sys.getrefcount(records)
        monkeypatch.setattr(os, "fsync", gate)
        append = asyncio.ensure_future(writer.append(records))
        try:
            assert await asyncio.to_thread(gate.entered.wait, 10)  # the committer's fsync
            waiting = sys.getrefcount(records)
        finally:
            gate.release()
        await append
        await writer.close()
        return alone, waiting

    alone, waiting = asyncio.run(scenario())
    assert waiting == alone


def test_append_needs_a_started_writer(make_writer: MakeWriter) -> None:
    writer = make_writer()
    with pytest.raises(RuntimeError):
        writer.append_sync([b"x"])
    writer.start_sync()
    writer.close_sync()
    with pytest.raises(RuntimeError):
        writer.append_sync([b"x"])


def test_two_writers_in_one_directory(
    make_writer: MakeWriter, spool_dir: Path, drain: Drain
) -> None:
    first, second = make_writer(), make_writer()
    first.start_sync()
    second.start_sync()
    for i in range(10):
        (first if i % 2 else second).append_sync([rec(i)])
    records, _ = drain(SpoolReader(spool_dir))
    assert sorted(records) == [rec(i) for i in range(10)]
    assert [r for r in records if int(r[:6]) % 2] == [rec(i) for i in range(1, 10, 2)]
