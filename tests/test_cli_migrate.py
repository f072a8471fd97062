"""Only ``tracebox migrate`` (and ``serve``) change the schema; other commands refuse an
unmigrated database with a clear message instead of creating tables in it."""

from __future__ import annotations

import subprocess
import sys

import sqlalchemy as sa

from tests.helpers import tracebox_env
from tracebox.config import Settings


def _run(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracebox", *args],
        env=tracebox_env(settings),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_commands_need_a_migrated_database(settings: Settings) -> None:
    refused = _run(settings, "project", "list")
    assert refused.returncode != 0
    assert "run `tracebox migrate` first" in refused.stderr
    engine = sa.create_engine(settings.resolved_database_url())
    try:
        assert sa.inspect(engine).get_table_names() == []  # nothing was created
    finally:
        engine.dispose()
    assert _run(settings, "migrate").returncode == 0
    listed = _run(settings, "project", "list")
    assert listed.returncode == 0 and listed.stdout.strip() == "[]"
