"""Issue 9, defects 1 and 6: a database outage is buffered by the spool, quietly."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.durability import scenarios


@pytest.mark.slow
def test_a_20_s_postgresql_outage_under_load_keeps_known_keys_at_200(tmp_path: Path) -> None:
    result = scenarios.database_outage(tmp_path)
    assert result.notes == []
    assert result.acknowledged >= 600
    assert (result.lost, result.duplicated) == (0, 0)
