"""Issue 9, defect 5: SIGTERM stops serve cleanly: in-flight requests finish, the digest
finishes its batch, serve exits 0 after its children (before: uvicorn re-raised SIGTERM,
serve died by it, and the digest stopped seconds later on its own)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.durability import scenarios


@pytest.mark.slow
@pytest.mark.parametrize("whole_group", [False, True], ids=["main-process", "process-group"])
def test_sigterm_exits_0_with_no_process_left(tmp_path: Path, whole_group: bool) -> None:
    result = scenarios.graceful_stop(tmp_path, whole_group=whole_group)
    assert result.notes == []
    assert (result.lost, result.duplicated) == (0, 0)
