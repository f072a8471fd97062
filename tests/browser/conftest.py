"""Browser tests: a live ``tracebox serve`` (SQLite, a free port) per module, and Debian's
chromium driven by Playwright (``executable_path``; never a downloaded browser)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from tests.browser.harness import sign_in
from tests.helpers import LiveServer, free_port, start_server
from tracebox.config import Settings

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / ".cache" / "sdk" / "manifest.json"


@dataclass
class Tracebox:
    server: LiveServer
    root_password: str

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture(scope="module")
def tracebox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tracebox]:
    """A live server whose DSNs point at itself; root's password is the generated one."""
    port = free_port()
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("tracebox") / "data",
        database_url="",
        external_url=f"http://127.0.0.1:{port}",
        spool_commit_interval_ms=0.5,
        digest_poll_interval_ms=5,
    )
    server = start_server(settings, port=port)
    password = (settings.data_dir / "initial_root_password").read_text().strip()
    yield Tracebox(server, password)
    server.stop()


@pytest.fixture
def context(browser: Browser, tracebox: Tracebox) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=tracebox.url)
    yield ctx
    ctx.close()


@pytest.fixture
def root_page(context: BrowserContext, tracebox: Tracebox) -> Page:
    page = context.new_page()
    sign_in(page, tracebox.url, "root", tracebox.root_password)
    return page


def python_sdk_program() -> dict[str, Any]:
    """The first installed Python SDK program (scripts/install-sdks.sh python)."""
    if not MANIFEST.exists():
        pytest.skip("run scripts/install-sdks.sh python (make test does)")
    programs = json.loads(MANIFEST.read_text())["programs"]
    found = [p for p in programs if p["language"] == "python" and p.get("installed", True)]
    if not found:
        pytest.skip("no Python SDK program installed")
    return dict(found[-1])
