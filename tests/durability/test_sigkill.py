"""Contract 1 and 2: SIGKILL the whole node under load (two web workers and the digest);
after a restart every acknowledged envelope is stored, and counted, exactly once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.durability import scenarios


@pytest.mark.slow
def test_sigkill_under_load_loses_no_acknowledged_event(tmp_path: Path) -> None:
    result = scenarios.node_crash(tmp_path)
    assert result.notes == []
    assert result.acknowledged >= 400
    assert (result.lost, result.duplicated) == (0, 0)
