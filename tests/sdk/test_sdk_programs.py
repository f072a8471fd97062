"""Run every real-SDK program against the capture server (slow; needs
scripts/install-sdks.sh to have been run, otherwise the tests are skipped)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.sdk.run_programs import DEFAULT_MANIFEST, check_failure, check_success

pytestmark = pytest.mark.slow


def _programs() -> list[dict[str, Any]]:
    if not DEFAULT_MANIFEST.is_file():
        return []
    return list(json.loads(DEFAULT_MANIFEST.read_text())["programs"])


PROGRAMS = _programs()


def _require(prog: dict[str, Any]) -> None:
    if not prog.get("installed"):
        pytest.skip(f"{prog['id']} not installed (scripts/install-sdks.sh {prog['language']})")


@pytest.mark.skipif(
    not PROGRAMS, reason="no .cache/sdk/manifest.json (run scripts/install-sdks.sh)"
)
@pytest.mark.parametrize("prog", PROGRAMS, ids=[p["id"] for p in PROGRAMS])
def test_program_delivers_everything(prog: dict[str, Any]) -> None:
    _require(prog)
    result = check_success(prog, repeat=2, save=False)
    assert not result["problems"], result


@pytest.mark.skipif(
    not PROGRAMS, reason="no .cache/sdk/manifest.json (run scripts/install-sdks.sh)"
)
@pytest.mark.parametrize("mode", ["500", "down"])
@pytest.mark.parametrize("prog", PROGRAMS, ids=[p["id"] for p in PROGRAMS])
def test_program_exit_code_is_honest(prog: dict[str, Any], mode: str) -> None:
    _require(prog)
    result = check_failure(prog, mode)
    assert result["ok"], result
