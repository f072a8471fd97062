"""Issue 9, defect 7: a second instance on a data directory in use exits at once, touching
nothing (before, it wiped the running node's metrics and ran a second digest)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.durability import scenarios


@pytest.mark.slow
def test_a_second_instance_exits_at_once_and_touches_nothing(tmp_path: Path) -> None:
    result = scenarios.second_instance(tmp_path)
    assert result.notes == []
    assert (result.lost, result.duplicated) == (0, 0)
