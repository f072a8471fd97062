"""Roles in the browser: a Reporter reads errors but sees no Resolve button and is
refused (403) where the policy says so; a project they are not in does not exist for
them (404). Admins create and block users from the UI."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import Tracebox
from tests.browser.harness import (
    add_member,
    create_project,
    create_user,
    csrf_token,
    send_event,
    sign_in,
)

pytestmark = pytest.mark.slow
PASSWORD = "reporter password 1"


def test_reporter_reads_but_cannot_change(
    root_page: Page, browser: Browser, tracebox: Tracebox
) -> None:
    page, base = root_page, tracebox.url
    path = create_project(page, base, "Team")
    private = create_project(page, base, "Private")
    send_event(
        page, base, path, {"exception": {"values": [{"type": "RuntimeError", "value": "boom"}]}}
    )
    page.goto(f"{base}/{path}/-/error_tracking")
    expect(page.get_by_role("link", name="RuntimeError: boom")).to_be_visible(timeout=30_000)
    create_user(page, base, "rita", PASSWORD)
    add_member(page, base, path, "rita", "Reporter")

    reporter = browser.new_context().new_page()
    sign_in(reporter, base, "rita", PASSWORD)
    expect(reporter.get_by_role("link", name="Team")).to_be_visible()
    expect(reporter.get_by_role("link", name="Private")).to_have_count(0)
    reporter.get_by_role("link", name="Team").click()
    link = reporter.get_by_role("link", name="RuntimeError: boom")
    expect(link).to_be_visible()
    expect(reporter.get_by_role("button", name=re.compile("^Resolve"))).to_have_count(0)
    expect(reporter.get_by_role("link", name="Monitor")).to_have_count(0)  # no settings
    link.click()
    expect(reporter.get_by_role("heading", name="Stack trace")).to_be_visible()
    expect(reporter.get_by_role("button", name="Resolve")).to_have_count(0)

    error_url = reporter.url
    token = csrf_token(reporter)
    forged = reporter.request.post(
        error_url + "/status", form={"_csrf": token, "status": "resolved"}, max_redirects=0
    )
    assert forged.status == 403
    assert reporter.request.get(f"{base}/{path}/-/settings/monitor").status == 403
    assert (
        reporter.request.post(
            f"{base}/{path}/-/settings/monitor/client_keys", form={"_csrf": token}, max_redirects=0
        ).status
        == 403
    )
    assert (
        reporter.request.get(
            f"{base}/{path}/-/error_tracking/projects.json?api_host=https://x.example&token=t"
        ).status
        == 403
    )
    for url in (f"{base}/{private}/-/error_tracking", f"{base}/{private}/-/project_members"):
        assert reporter.request.get(url).status == 404
    assert reporter.request.get(f"{base}/admin/users").status == 403
    reporter.goto(f"{base}/{path}/-/settings/monitor")
    expect(reporter.get_by_role("heading", name="Access denied")).to_be_visible()

    # An admin blocks the user: their session ends at the next request.
    page.goto(f"{base}/admin/users")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Block rita").click()
    expect(page.get_by_text("User rita was blocked.")).to_be_visible()
    reporter.goto(f"{base}/{path}/-/error_tracking")
    expect(reporter).to_have_url(re.compile(r"/users/sign_in"))
    reporter.context.close()
