from __future__ import annotations

import random
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tracebox.spool import SpoolReader, SpoolWriter

MIB = 1024 * 1024


@settings(max_examples=30, deadline=None)
@given(
    calls=st.lists(st.lists(st.integers(0, MIB), max_size=4), max_size=6),
    batch=st.integers(1, 5),
    seed=st.integers(0, 2**32),
)
def test_random_records_round_trip(calls: list[list[int]], batch: int, seed: int) -> None:
    # Random bytes from a seed: hypothesis would draw a 1 MiB binary byte by byte.
    rng = random.Random(seed)
    payloads = [[rng.randbytes(size) for size in call] for call in calls]
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        writer = SpoolWriter(
            directory,
            segment_bytes=MIB,  # 1 MiB records overflow it: rotation and oversized calls
            max_undigested_bytes=1024 * MIB,
            commit_interval_s=0.0,
            retry_after=1,
        )
        writer.start_sync()
        for call in payloads:
            writer.append_sync(call)
        writer.close_sync()
        reader = SpoolReader(directory)
        records: list[bytes] = []
        positions: dict[str, int] = {}
        while (read := reader.read(positions, batch)).records:
            assert len(read.records) <= batch
            records.extend(read.records)
            positions = read.positions
        assert records == [record for call in payloads for record in call]
        assert reader.pending_bytes(positions) == 0
        reader.release(positions)
        assert list(directory.iterdir()) == []
