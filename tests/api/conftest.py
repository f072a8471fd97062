"""The whole app in-process for REST API tests (helpers in ``tests.inprocess``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.inprocess import Api, api_client
from tracebox.config import Settings
from tracebox.store import Database


@pytest.fixture
def api(settings: Settings, db: Database) -> Iterator[Api]:
    yield from api_client(settings, db)
