"""Issue 9, defect 2: a spool cap smaller than a segment wedged ingestion for good (the cap
counted digested bytes of the live segment, which was never finished)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.durability import scenarios


@pytest.mark.slow
def test_a_1_mib_spool_cap_keeps_working_for_60_s_under_load(tmp_path: Path) -> None:
    result = scenarios.small_spool_cap(tmp_path)
    assert result.notes == []
    assert (result.lost, result.duplicated) == (0, 0)
