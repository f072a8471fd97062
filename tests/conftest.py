"""Shared fixtures: databases (SQLite and PostgreSQL), settings, projects, live servers."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa

from tests.helpers import LiveServer, missing, start_server
from tracebox.config import Settings
from tracebox.store import Database

if TYPE_CHECKING:
    from playwright.sync_api import Browser

POSTGRES_URL = os.environ.get("TRACEBOX_TEST_POSTGRES_URL", "")


def _postgres_available() -> None:
    if not POSTGRES_URL:
        missing("TRACEBOX_TEST_POSTGRES_URL is not set (make test starts PostgreSQL)")


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[sa.Engine]:
    _postgres_available()
    url = POSTGRES_URL.replace("postgresql://", "postgresql+psycopg://", 1)
    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    yield engine
    engine.dispose()


def new_postgres_database(admin: sa.Engine) -> str:
    """A fresh, empty database on the test cluster; returns its URL."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    return POSTGRES_URL.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return ""  # Settings resolves it to <data_dir>/tracebox.sqlite3
    admin = request.getfixturevalue("postgres_admin")
    return new_postgres_database(admin)


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        external_url="http://localhost:8000",
        spool_commit_interval_ms=0.5,
        digest_poll_interval_ms=5,
    )


@pytest.fixture
def db(settings: Settings) -> Iterator[Database]:
    database = Database(settings.resolved_database_url())
    database.migrate()
    yield database
    database.dispose()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's chromium driven by Playwright, one per test module. One definition for the
    whole suite: a second live sync_playwright in a process refuses to start, and a
    session-long one would leave its event loop running under unrelated asyncio tests."""
    from playwright.sync_api import sync_playwright

    from tests.browser.harness import CHROMIUM, launch_browser

    if not CHROMIUM.exists():
        missing(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as pw:
        chromium = launch_browser(pw)
        yield chromium
        chromium.close()


@pytest.fixture
def live_server(settings: Settings) -> Iterator[LiveServer]:
    server = start_server(settings)
    yield server
    server.stop()
