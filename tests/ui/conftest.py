"""The whole app in-process for web UI tests (helpers in ``tests.inprocess``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.inprocess import Ui, ui_client
from tracebox.config import Settings
from tracebox.store import Database


@pytest.fixture
def ui(settings: Settings, db: Database) -> Iterator[Ui]:
    yield from ui_client(settings, db)
