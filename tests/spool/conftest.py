from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tracebox.spool import SpoolReader, SpoolWriter

MIB = 1024 * 1024

Drain = Callable[..., tuple[list[bytes], dict[str, int]]]


@pytest.fixture
def spool_dir(tmp_path: Path) -> Path:
    return tmp_path / "spool"


@pytest.fixture
def make_writer(spool_dir: Path) -> Iterator[Callable[..., SpoolWriter]]:
    """Build writers on ``spool_dir``; every one is closed at teardown (nothing left running)."""
    writers: list[SpoolWriter] = []

    def make(**overrides: Any) -> SpoolWriter:
        options: dict[str, Any] = {
            "segment_bytes": MIB,
            "max_undigested_bytes": 1024 * MIB,
            "commit_interval_s": 0.002,
            "retry_after": 30,
        }
        writer = SpoolWriter(spool_dir, **(options | overrides))
        writers.append(writer)
        return writer

    yield make
    for writer in writers:
        writer.close_sync()


def drain_spool(
    reader: SpoolReader, positions: Mapping[str, int] | None = None, batch: int = 1000
) -> tuple[list[bytes], dict[str, int]]:
    """Read until a read makes no progress; return the records and the final positions."""
    records: list[bytes] = []
    current = dict(positions or {})
    while True:
        result = reader.read(current, batch)
        records.extend(result.records)
        if not result.records and result.positions == current:
            return records, current
        current = result.positions


@pytest.fixture
def drain() -> Drain:
    return drain_spool


def segment_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.seg"))


@pytest.fixture
def segments() -> Callable[[Path], list[Path]]:
    return segment_files
