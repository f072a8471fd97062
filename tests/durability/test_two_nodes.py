"""Issue 9, defect 3: two nodes on one PostgreSQL count every session and dropped item once
(before, each digest wrote the other's cursors back and replayed its records)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.durability import scenarios


@pytest.mark.slow
def test_two_nodes_on_one_postgresql_count_everything_exactly_once(tmp_path: Path) -> None:
    result = scenarios.two_nodes(tmp_path)
    assert result.notes == []
    assert result.acknowledged >= 3000
    assert (result.lost, result.duplicated) == (0, 0)
