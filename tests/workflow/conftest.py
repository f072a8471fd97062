"""The app in-process for the triage tests (helpers in ``tests.inprocess``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.inprocess import Api, Ui, api_client, ui_client
from tracebox.config import Settings
from tracebox.store import Database


@pytest.fixture
def api(settings: Settings, db: Database) -> Iterator[Api]:
    yield from api_client(settings, db)


@pytest.fixture
def ui(settings: Settings, db: Database) -> Iterator[Ui]:
    yield from ui_client(settings, db)
