"""Real Chromium: Connect -> pick project -> Save on the settings page, then the list,
details and Resolve of a project linked to the fake Sentry server; error messages."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.browser.harness import create_project, sign_in
from tests.external.fake_sentry import TOKEN, FakeSentry, RunningFake
from tests.helpers import LiveServer, free_port, start_server
from tracebox.config import Settings

pytestmark = pytest.mark.slow
CONNECTION_FAILED = "Connection failed. Check auth token and try again"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    port = free_port()
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("tracebox") / "data",
        external_url=f"http://127.0.0.1:{port}",
        digest_poll_interval_ms=5,
    )
    os.environ["TRACEBOX_EXTERNAL_ALLOW_LOCAL_NETWORK"] = "true"  # the fake is on 127.0.0.1
    try:
        live = start_server(settings, port=port)
    finally:
        del os.environ["TRACEBOX_EXTERNAL_ALLOW_LOCAL_NETWORK"]
    yield live
    live.stop()


@pytest.fixture
def fake() -> Iterator[FakeSentry]:
    fake = FakeSentry()
    fake.add_issues(25)
    running = RunningFake(fake)
    yield fake
    running.stop()


@pytest.fixture
def page(browser: Browser, server: LiveServer) -> Iterator[Page]:
    context: BrowserContext = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    password = Path(server.settings.data_dir / "initial_root_password").read_text().strip()
    sign_in(page, server.url, "root", password)
    yield page
    context.close()


def _connect(page: Page, api_url: str, token: str) -> None:
    page.get_by_label("Sentry (external server)").check()
    page.get_by_label("Sentry API URL").fill(api_url)
    page.get_by_label("Auth token").fill(token)
    page.get_by_role("button", name="Connect").click()


def test_connect_pick_save_list_details_resolve(
    page: Page, server: LiveServer, fake: FakeSentry
) -> None:
    base = server.url
    path = create_project(page, base, "Linked web")
    page.goto(f"{base}/{path}/-/settings/monitor")
    _connect(page, fake.url, "bad")
    status = page.locator("#connect-status")
    expect(status).to_contain_text(CONNECTION_FAILED)
    expect(status).to_contain_text("Sentry refused the auth token (HTTP 401)")
    _connect(page, fake.url + "/e500", TOKEN)
    expect(status).to_contain_text("Sentry response status code: 500")
    _connect(page, fake.url + "/big", TOKEN)
    expect(status).to_contain_text("Sentry API response is too big")

    _connect(page, fake.url, TOKEN)
    expect(status).to_contain_text("Connected: 2 projects found.")
    page.get_by_role("combobox", name="Project").select_option(label="Acme Org | Web")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_text("Your changes have been saved.")).to_be_visible()
    expect(page.get_by_role("combobox", name="Project")).to_have_value("acme-org/web")
    expect(page.get_by_label("Auth token")).to_have_value("")  # never sent back
    assert TOKEN not in page.content()

    page.goto(f"{base}/{path}/-/error_tracking")
    expect(page.get_by_text("ZeroDivisionError: fake error 1", exact=True)).to_be_visible()
    page.get_by_text("ZeroDivisionError: fake error 1", exact=True).click()
    expect(page.get_by_text("return 1 / 0").first).to_be_visible()
    page.get_by_role("button", name="Resolve").click()
    expect(page.get_by_text(re.compile("was resolved"))).to_be_visible()
    assert fake.issues["1001"]["status"] == "resolved"


def test_connect_with_the_monitor_feature_disabled_shows_the_spec_message(
    page: Page, server: LiveServer, fake: FakeSentry
) -> None:
    base = server.url
    path = create_project(page, base, "Monitor off")
    page.goto(f"{base}/{path}/-/settings/monitor")
    other = page.context.new_page()  # the feature is switched off while the form is open
    other.goto(f"{base}/{path}/-/settings/general")
    other.get_by_label("Monitor (error tracking)").select_option("disabled")
    other.get_by_role("button", name="Save changes").click()
    expect(other.get_by_text("Your changes have been saved.")).to_be_visible()
    response = page.request.get(
        f"{base}/{path}/-/error_tracking/projects.json?api_host={fake.url}&token={TOKEN}"
    )
    assert response.status == 404
    _connect(page, fake.url, TOKEN)
    expect(page.locator("#connect-status")).to_contain_text(CONNECTION_FAILED)
    assert fake.requests == []
