"""Issue 9, defect 4: a killed digest is restarted, and /-/health shows it dead in between
(before: a zombie, health 200, a frozen lag metric, the spool growing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.durability import scenarios


@pytest.mark.slow
def test_a_killed_digest_is_restarted_and_health_reports_it(tmp_path: Path) -> None:
    result = scenarios.digest_crash(tmp_path)
    assert result.notes == []
    assert (result.lost, result.duplicated) == (0, 0)
