"""In-process ingestion: the ASGI app with its lifespan, a project, a key, a digest worker."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from unittest import mock

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

import tracebox.app
from tracebox.app import create_app
from tracebox.config import Settings
from tracebox.digest.worker import DigestWorker
from tracebox.ingest.ratelimit import Limiter
from tracebox.models import ClientKey
from tracebox.spool import SpoolReader
from tracebox.store import Database, client_keys, projects
from tracebox.store import stats as store_stats


@dataclass
class Ingest:
    client: TestClient
    db: Database
    settings: Settings
    key: ClientKey
    project_id: int

    def auth(self, key: ClientKey | None = None) -> dict[str, str]:
        k = key or self.key
        return {"X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={k.public_key}"}

    def url(self, endpoint: str, project_id: int | None = None) -> str:
        return f"/api/{project_id or self.project_id}/{endpoint}/"

    def digest(self) -> int:
        worker = DigestWorker(self.db, SpoolReader(self.settings.spool_dir), batch_size=500)
        return worker.drain()

    def counts(self) -> dict[str, object]:
        self.digest()
        with self.db.read() as conn:
            return store_stats.counts(conn)


def make_ingest(
    settings: Settings, db: Database, *, limits_at: float | None = None
) -> Iterator[Ingest]:
    """``limits_at``: the moment the rate limits and quotas read for every request. They
    count in windows of the clock (minute, hour, UTC day); a test that fills one with
    several requests must not see it end between two of them, as it would with the real
    clock in the last milliseconds of a window."""
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
        projects.put_settings(conn, project.id, active=True, integrated=True)
        key = client_keys.create(conn, project.id)
    app = create_app(settings) if limits_at is None else _app_limited_at(settings, limits_at)
    with TestClient(app, client=("203.0.113.7", 5000)) as client:
        yield Ingest(client, db, settings, key, project.id)


def _app_limited_at(settings: Settings, moment: float) -> Starlette:
    class LimiterAtMoment(Limiter):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs, clock=lambda: moment)

    with mock.patch.object(tracebox.app, "Limiter", LimiterAtMoment):
        return create_app(settings)


@pytest.fixture
def ingest(settings: Settings, db: Database) -> Iterator[Ingest]:
    yield from make_ingest(settings, db)
