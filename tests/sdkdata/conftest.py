"""In-process ingestion for the SDK data tests: the app, a project and key, the digest."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.ingest.conftest import Ingest, make_ingest
from tracebox.config import Settings
from tracebox.store import Database


@pytest.fixture
def ingest(settings: Settings, db: Database) -> Iterator[Ingest]:
    yield from make_ingest(settings, db)
