from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tracebox.spool import SpoolReader, SpoolWriter, spool_bytes
from tracebox.spool.format import FILE_HEADER_BYTES, RECORD_HEADER, frame

MakeWriter = Callable[..., SpoolWriter]
Drain = Callable[..., tuple[list[bytes], dict[str, int]]]
Segments = Callable[[Path], list[Path]]

SIZE = 100
FRAMED = RECORD_HEADER.size + SIZE


def rec(i: int) -> bytes:
    return b"%06d" % i + b"." * (SIZE - 6)


def write_segment(
    make_writer: MakeWriter, spool_dir: Path, calls: list[list[bytes]], *, close: bool
) -> Path:
    """Write ``calls`` with a new writer; return its (single) segment."""
    writer = make_writer()
    writer.start_sync()
    for call in calls:
        writer.append_sync(call)
    if close:
        writer.close_sync()
    return sorted(spool_dir.glob("*.seg"))[-1]  # names sort by creation


def test_positions_are_exact(make_writer: MakeWriter, spool_dir: Path) -> None:
    writer = make_writer(segment_bytes=2048)
    writer.start_sync()
    calls = [[rec(i * 10 + j) for j in range(i % 4 + 1)] for i in range(40)]
    for call in calls:
        writer.append_sync(call)
    expected = [record for call in calls for record in call]

    reader = SpoolReader(spool_dir)
    positions: dict[str, int] = {}
    seen: list[bytes] = []
    while (batch := reader.read(positions, 3)).records:
        assert len(batch.records) <= 3
        # The reader keeps no state: the same positions give the same batch.
        assert reader.read(positions, 3) == batch
        seen.extend(batch.records)
        positions = batch.positions
    assert seen == expected
    assert reader.pending_bytes(positions) == 0


def test_batch_positions_merge_input_positions(make_writer: MakeWriter, spool_dir: Path) -> None:
    write_segment(make_writer, spool_dir, [[rec(0)], [rec(1)]], close=True)
    batch = SpoolReader(spool_dir).read({"gone.seg": 123}, 1)
    assert batch.records == [rec(0)]
    [name] = [n for n in batch.positions if n != "gone.seg"]
    assert batch.positions == {"gone.seg": 123, name: FILE_HEADER_BYTES + FRAMED}


def test_torn_tail_of_a_live_segment_waits_for_the_rest(
    make_writer: MakeWriter, spool_dir: Path, drain: Drain
) -> None:
    path = write_segment(make_writer, spool_dir, [[rec(0)], [rec(1)]], close=False)
    reader = SpoolReader(spool_dir)
    records, positions = drain(reader)
    assert records == [rec(0), rec(1)]

    torn = frame([rec(2)])
    with path.open("ab") as segment:  # the writer is in the middle of a write
        segment.write(torn[:50])
        segment.flush()
        assert drain(reader, positions) == ([], positions)  # neither returned nor skipped
        segment.write(torn[50:])
    records, positions = drain(reader, positions)
    assert records == [rec(2)]
    assert positions[path.name] == path.stat().st_size


def test_torn_tail_of_a_finished_segment_is_skipped(
    make_writer: MakeWriter, spool_dir: Path, drain: Drain
) -> None:
    path = write_segment(make_writer, spool_dir, [[rec(0)], [rec(1)], [rec(2)]], close=True)
    os.truncate(path, path.stat().st_size - 5)
    reader = SpoolReader(spool_dir)
    records, positions = drain(reader)
    assert records == [rec(0), rec(1)]
    assert positions[path.name] == path.stat().st_size
    assert reader.pending_bytes(positions) == 0
    assert reader.release(positions) == [path.name]


def test_a_torn_call_returns_none_of_its_records(
    make_writer: MakeWriter, spool_dir: Path, drain: Drain
) -> None:
    path = write_segment(make_writer, spool_dir, [[rec(0)], [rec(1), rec(2), rec(3)]], close=True)
    os.truncate(path, path.stat().st_size - 5)  # the last record of the call is torn
    assert drain(SpoolReader(spool_dir))[0] == [rec(0)]


def test_release_after_a_torn_tail_even_without_reading_past_it(
    make_writer: MakeWriter, spool_dir: Path
) -> None:
    path = write_segment(make_writer, spool_dir, [[rec(0)], [rec(1)]], close=True)
    os.truncate(path, path.stat().st_size - 5)
    reader = SpoolReader(spool_dir)
    batch = reader.read({}, 1)
    assert batch.positions[path.name] < path.stat().st_size
    assert reader.release(batch.positions) == [path.name]


def corrupt(path: Path, offset: int) -> None:
    with path.open("r+b") as segment:
        segment.seek(offset)
        byte = segment.read(1)
        segment.seek(offset)
        segment.write(bytes([byte[0] ^ 0xFF]))


def test_corrupt_record_in_a_finished_segment_is_skipped_with_a_warning(
    make_writer: MakeWriter, spool_dir: Path, drain: Drain, caplog: pytest.LogCaptureFixture
) -> None:
    bad = write_segment(make_writer, spool_dir, [[rec(i)] for i in range(5)], close=True)
    corrupt(bad, FILE_HEADER_BYTES + 2 * FRAMED + RECORD_HEADER.size + 10)
    good = write_segment(make_writer, spool_dir, [[rec(5)]], close=True)
    reader = SpoolReader(spool_dir)
    with caplog.at_level(logging.WARNING, logger="tracebox.spool"):
        records, positions = drain(reader)
    assert records == [rec(0), rec(1), rec(5)]
    assert "corrupt record" in caplog.text
    assert positions[bad.name] == bad.stat().st_size
    assert reader.release(positions) == [bad.name, good.name]


def test_corrupt_record_in_a_live_segment_is_not_skipped(
    make_writer: MakeWriter, spool_dir: Path, drain: Drain
) -> None:
    writer = make_writer()
    writer.start_sync()
    for i in range(3):
        writer.append_sync([rec(i)])
    [path] = spool_dir.glob("*.seg")
    corrupt(path, FILE_HEADER_BYTES + FRAMED + 3)  # the length of record 1
    reader = SpoolReader(spool_dir)
    records, positions = drain(reader)
    assert records == [rec(0)]
    assert reader.release(positions) == []

    writer.close_sync()  # now finished: the rest is skipped
    records, positions = drain(reader, positions)
    assert records == []
    assert reader.release(positions) == [path.name]


def test_a_file_that_is_not_a_segment_is_skipped_once_finished(
    spool_dir: Path, drain: Drain
) -> None:
    spool_dir.mkdir()
    stray = spool_dir / "00000000000000000001-other-1-000001.seg"
    stray.write_bytes(b"\0" * 4096)  # e.g. what a power loss left
    reader = SpoolReader(spool_dir)
    records, positions = drain(reader)
    assert records == []
    assert reader.release(positions) == [stray.name]


def test_empty_finished_segment_is_released(make_writer: MakeWriter, spool_dir: Path) -> None:
    path = write_segment(make_writer, spool_dir, [], close=True)
    reader = SpoolReader(spool_dir)
    assert reader.read({}, 10).positions == {}
    assert reader.release({}) == [path.name]


def test_pending_bytes_and_spool_bytes(make_writer: MakeWriter, spool_dir: Path) -> None:
    assert spool_bytes(spool_dir) == 0
    assert SpoolReader(spool_dir).read({}, 10).records == []
    path = write_segment(make_writer, spool_dir, [[rec(0)], [rec(1)]], close=True)
    reader = SpoolReader(spool_dir)
    assert spool_bytes(spool_dir) == path.stat().st_size == FILE_HEADER_BYTES + 2 * FRAMED
    assert reader.pending_bytes({}) == 2 * FRAMED
    assert reader.pending_bytes(reader.read({}, 1).positions) == FRAMED


def test_tmp_files_are_ignored_and_stale_ones_removed(
    make_writer: MakeWriter, spool_dir: Path, drain: Drain
) -> None:
    write_segment(make_writer, spool_dir, [[rec(0)]], close=True)
    fresh = spool_dir / "00000000000000000002-h-1-000001.seg.tmp"
    stale = spool_dir / "00000000000000000001-h-1-000001.seg.tmp"
    fresh.write_bytes(frame([rec(9)]))
    stale.write_bytes(b"")
    os.utime(stale, (0, 0))
    reader = SpoolReader(spool_dir)
    records, positions = drain(reader)
    assert records == [rec(0)]
    reader.release(positions)
    assert fresh.exists()
    assert not stale.exists()
