"""Issue 12 in real headless Chromium: a real Python SDK event's local variables on the
details page (collapsible, escaped), its attachment saved as a download and never shown,
its user feedback and its trace's logs; sentry-go's slog records on the log view;
@sentry/browser's unhandled session and late user in release health."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import Tracebox
from tests.browser.harness import create_project, project_dsn, reload_until
from tests.e2e import sdk_programs
from tests.e2e.programs.python_sdk_data import ATTACHMENT
from tests.helpers import wait_for

pytestmark = pytest.mark.slow


def test_python_event_variables_attachment_feedback_and_logs(
    root_page: Page, tracebox: Tracebox
) -> None:
    page, base = root_page, tracebox.url
    path = create_project(page, base, "Checkout")
    sdk_programs.run(sdk_programs.PYTHON_SDK_DATA, project_dsn(page, base, path))
    page.goto(f"{base}/{path}/-/error_tracking")
    reload_until(page, "ValueError: invalid quantity: 7")
    page.get_by_role("link", name="ValueError: invalid quantity: 7").click()

    # The newest in-app frame is open with its variables; the others are collapsed.
    crash = page.locator("li.frame.in-app").first
    expect(crash).to_contain_text("charge")
    variables = crash.locator("details.frame-vars")
    expect(variables).to_have_attribute("open", "")
    table = variables.locator("table.vars")
    expect(table.locator("th", has_text="card_holder")).to_be_visible()
    # The value is shown as text: the SDK's repr, markup and all, never as markup.
    expect(table.locator("tr", has_text="card_holder").locator("pre")).to_have_text(
        "'Ann <script>x</script>'"
    )
    expect(page.locator("script", has_text="x")).to_have_count(0)
    variables.locator("summary").click()
    expect(table).to_be_hidden()
    checkout = page.locator(".frame-fn", has_text=re.compile("^checkout$"))
    frame = page.locator("li.frame.in-app", has=checkout)
    outer = frame.locator("details.frame-vars")
    expect(outer).to_be_hidden()  # inside the collapsed frame
    frame.locator("summary").first.click()
    expect(outer).not_to_have_attribute("open", "")
    outer.locator("summary").click()
    expect(outer.locator("th", has_text="items")).to_be_visible()

    # The attachment is a download: the browser saves it, the page stays where it is.
    here = page.url
    with page.expect_download() as downloaded:
        page.get_by_role("link", name="receipt.html").click()
    download = downloaded.value
    assert download.suggested_filename == "receipt.html"
    assert download.path().read_bytes() == ATTACHMENT
    assert page.url == here
    expect(page.locator("body")).not_to_contain_text("alert('attachment')")

    expect(page.get_by_role("link", name="1 user report")).to_be_visible()
    feedback = page.locator("section", has=page.get_by_role("heading", name="User feedback"))
    expect(feedback).to_contain_text("The pay button froze, then this error.")
    logs = page.locator("section", has=page.get_by_role("heading", name="Logs of this trace"))
    expect(logs).to_contain_text("checkout started for order 7")
    expect(logs).to_contain_text("stock for sku-1 is low")


def test_slog_records_on_the_log_view(root_page: Page, tracebox: Tracebox) -> None:
    program = sdk_programs.installed(sdk_programs.GO_SLOG, "go")
    page, base = root_page, tracebox.url
    path = create_project(page, base, "Payments")
    sdk_programs.run(program, project_dsn(page, base, path))
    page.goto(f"{base}/{path}/-/logs")
    reload_until(page, "order received")
    rows = page.locator("table.logs-table tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.first).to_contain_text("charge failed")
    rows.first.locator("summary").click()
    expect(rows.first.locator("dl.log-attributes")).to_contain_text(
        "card declined: insufficient funds"
    )
    page.get_by_label("error", exact=True).check()
    page.get_by_role("button", name="Search").click()
    expect(rows).to_have_count(1)
    page.get_by_role("link", name="Error Tracking").click()
    expect(page.get_by_role("link", name="charge failed")).to_be_visible()


def test_browser_unhandled_session_and_late_user_count_in_release_health(
    root_page: Page, tracebox: Tracebox, context: BrowserContext, tmp_path: Path
) -> None:
    """@sentry/browser 11: the session's first update has no user; setUser sends an
    update with the ``did``; an error nothing catches ends it as ``unhandled``."""
    page, base = root_page, tracebox.url
    path = create_project(page, base, "Pay")
    dsn = project_dsn(page, base, path)
    with sdk_programs.browser_session_site(tmp_path, dsn, "pay@3.0.0") as site:
        app = context.new_page()
        app.goto(site)
        expect(app.locator("body[data-ready=true]")).to_have_count(1)
        expect(app.locator("body[data-sessions='1']")).to_have_count(1)  # init, no user
        app.get_by_role("button", name="Pay").click()
        body = app.locator("body")
        # The user's update (setUser: status ok, the did) and the unhandled end.
        expect(body).to_have_attribute("data-sessions", "3", timeout=30_000)
        # The event goes in its own envelope, at the same time as the session's end:
        # either answer can come first.
        expect(body).to_have_attribute("data-sent", re.compile(r"\bevent:200\b"))
        app.close()

    page.goto(f"{base}/{path}/-/error_tracking/releases")
    health = page.locator("tr", has=page.locator("td.col-health"))
    cells = health.filter(has_text="pay@3.0.0").locator("td.num")

    def counts() -> list[str]:  # the digest may not have both updates yet: reload
        page.reload()
        return cells.all_inner_texts()

    # Sessions, crashed, errored, users: the unhandled session errored (not crashed),
    # and its user, who arrived with the last update, counts.
    wait_for(lambda: counts() == ["1", "0", "1", "1"], timeout=30, interval=0.3)
    page.goto(f"{base}/{path}/-/error_tracking")
    reload_until(page, "Error: payment failed for user-7")
    listed = page.locator("tr", has=page.get_by_role("link", name="Error: payment failed"))
    expect(listed.locator(".badge", has_text="Unhandled")).to_be_visible()
