"""Settings > Monitor saved and reloaded (both backends' forms, client keys, the Monitor
feature switch), and a personal access token created in the UI and used on the API."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Tracebox
from tests.browser.harness import create_project

pytestmark = pytest.mark.slow


def test_settings_saved_and_reloaded(root_page: Page, tracebox: Tracebox) -> None:
    page, base = root_page, tracebox.url
    path = create_project(page, base, "Settings demo")
    page.goto(f"{base}/{path}/-/settings/monitor")
    active = page.get_by_label("Active")
    expect(active).to_be_checked()
    expect(page.get_by_label("Tracebox (integrated)")).to_be_checked()
    expect(page.get_by_label("Sentry API URL")).to_be_hidden()  # external fields: on choice

    active.uncheck()
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_text("Your changes have been saved.")).to_be_visible()
    page.reload()
    expect(page.get_by_label("Active")).not_to_be_checked()
    page.goto(f"{base}/{path}/-/error_tracking")
    expect(page.get_by_role("heading", name="Get started with error tracking")).to_be_visible()

    page.goto(f"{base}/{path}/-/settings/monitor")
    page.get_by_label("Active").check()
    page.get_by_role("button", name="Save changes").click()
    # The save is a form POST and a navigation: reloading before it lands raced it
    # ("Not attached to an active page"), as the first save above already awaits.
    expect(page.get_by_text("Your changes have been saved.")).to_be_visible()
    page.reload()
    expect(page.get_by_label("Active")).to_be_checked()

    # The deprecated DSN (with the secret key) hides behind a toggle.
    secret_dsn = page.get_by_role("textbox", name="Deprecated DSN")
    expect(secret_dsn).to_be_hidden()
    page.get_by_text("Show deprecated DSN (with secret key)").click()
    expect(secret_dsn).to_have_value(re.compile(r"^http://[0-9a-f]{32}:[0-9a-f]{32}@"))

    # Client keys: create one, revoke the first (confirmed in a dialog).
    page.get_by_role("button", name="Create client key").click()
    expect(page.get_by_text("was created.")).to_be_visible()
    expect(page.get_by_role("button", name=re.compile("^Revoke key"))).to_have_count(2)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name=re.compile("^Revoke key")).first.click()
    expect(page.get_by_text("its DSN no longer works")).to_be_visible()
    expect(page.get_by_role("button", name=re.compile("^Revoke key"))).to_have_count(1)


def test_external_backend_form_validates_and_connect_fails_honestly(
    root_page: Page, tracebox: Tracebox
) -> None:
    page, base = root_page, tracebox.url
    path = create_project(page, base, "External demo")
    page.goto(f"{base}/{path}/-/settings/monitor")
    page.get_by_label("Sentry (external server)").check()
    expect(page.get_by_label("Sentry API URL")).to_be_visible()
    page.get_by_label("Sentry API URL").fill("https://sentry.invalid")
    page.get_by_label("Auth token").fill("sntrys_not-a-real-token")
    page.get_by_role("button", name="Connect").click()  # fetches projects.json
    status = page.locator("#connect-status")
    expect(status).to_contain_text("Connection failed. Check auth token and try again")
    expect(page.get_by_label("Auth token")).to_have_value("sntrys_not-a-real-token")

    page.get_by_label("Sentry API URL").fill("ftp://nowhere")
    page.get_by_role("button", name="Save changes").click()  # server-side validation
    expect(page.get_by_role("alert")).to_contain_text("Api_url must be an http or https URL")
    expect(page.get_by_label("Auth token")).to_have_value("")  # a token is never sent back

    # With the Monitor feature disabled the section says so; projects.json answers 404.
    page.goto(f"{base}/{path}/-/settings/general")
    page.get_by_label("Monitor (error tracking)").select_option("disabled")
    page.get_by_role("button", name="Save changes").click()
    page.goto(f"{base}/{path}/-/settings/monitor")
    expect(page.get_by_text("The Monitor feature is disabled for this project")).to_be_visible()
    link = page.get_by_role("link", name=re.compile("Enable it in Settings"))
    response = page.request.get(
        f"{base}/{path}/-/error_tracking/projects.json?api_host=https%3A%2F%2Fsentry.io&token=t"
    )
    assert response.status == 404
    link.click()
    page.get_by_label("Monitor (error tracking)").select_option("enabled")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_text("Your changes have been saved.")).to_be_visible()


def test_token_created_and_used_against_the_api(root_page: Page, tracebox: Tracebox) -> None:
    page, base = root_page, tracebox.url
    path = create_project(page, base, "Token demo")
    page.get_by_role("link", name="Access tokens").click()
    expiry = page.get_by_label("Expiration date").input_value()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", expiry)  # defaults to one year ahead
    page.get_by_label("Token name").fill("ci pipeline")
    expect(page.get_by_label("api", exact=True)).to_be_checked()
    page.get_by_role("button", name="Create personal access token").click()
    token = page.get_by_role("textbox", name="Token ci pipeline").input_value()
    assert token.startswith("tbpat-")

    answer = httpx.get(f"{base}/api/v4/projects", headers={"PRIVATE-TOKEN": token}, timeout=10)
    assert answer.status_code == 200
    assert path in [p["path_with_namespace"] for p in answer.json()]

    page.goto(f"{base}/-/user_settings/personal_access_tokens")  # shown once, never again
    expect(page.get_by_role("textbox", name="Token ci pipeline")).to_have_count(0)
    row = page.locator("tr", has_text="ci pipeline")
    expect(row).not_to_contain_text("never")  # last used: just now
    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Revoke ci pipeline").click()
    expect(page.get_by_text("The token was revoked.")).to_be_visible()
    revoked = httpx.get(f"{base}/api/v4/projects", headers={"PRIVATE-TOKEN": token}, timeout=10)
    assert revoked.status_code == 401
