"""Fixtures: a fake Sentry server, and the app in-process with the local network allowed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.external.fake_sentry import FakeSentry, RunningFake
from tests.inprocess import Api, Ui, api_client, ui_client
from tracebox.config import Settings
from tracebox.store import Database

READ_TIMEOUT_S = 1.0  # the fake's slow answers take 3 s


@pytest.fixture
def fake_sentry() -> Iterator[FakeSentry]:
    fake = FakeSentry()
    fake.add_issues(25)
    running = RunningFake(fake)
    yield fake
    running.stop()


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        external_url="http://localhost:8000",
        external_allow_local_network=True,  # the fake Sentry listens on 127.0.0.1
        external_read_timeout_seconds=READ_TIMEOUT_S,
    )


@pytest.fixture
def api(settings: Settings, db: Database) -> Iterator[Api]:
    yield from api_client(settings, db)


@pytest.fixture
def ui(settings: Settings, db: Database) -> Iterator[Ui]:
    yield from ui_client(settings, db)
