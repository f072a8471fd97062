"""The issue's walk in real headless Chromium: sign in as root, create a project, copy the
DSN, send an error with the real Python SDK, open it, resolve it, and see a new event
reopen it as regressed."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Tracebox, python_sdk_program
from tests.browser.harness import create_project, reload_until
from tests.e2e.test_python_sdk import run_program

pytestmark = pytest.mark.slow
TITLE = "ValueError: invalid quantity: 7"


def test_sign_in_project_dsn_sdk_error_resolve_regress(root_page: Page, tracebox: Tracebox) -> None:
    program = python_sdk_program()
    page, base = root_page, tracebox.url
    path = create_project(page, base, "Shop")
    assert path == "root/shop"
    # First run: the DSN, setup snippets for seven SDKs, a test-event button.
    expect(page.get_by_role("heading", name="Waiting for the first error")).to_be_visible()
    for language in ("Python", "Node.js", "Go", "Java", "Ruby", "PHP", "Rust"):
        expect(
            page.locator("summary", has_text=re.compile(f"^{re.escape(language)}$"))
        ).to_have_count(1)
    expect(page.get_by_role("button", name="Send a test event")).to_be_visible()

    page.get_by_role("button", name="Copy Data Source Name (DSN)").click()
    expect(page.get_by_role("button", name="Copy Data Source Name (DSN)")).to_have_text("Copied")
    dsn = page.evaluate("navigator.clipboard.readText()")
    assert dsn == page.get_by_role("textbox", name="Data Source Name (DSN)").input_value()
    assert re.fullmatch(
        rf"http://[0-9a-f]{{32}}@127\.0\.0\.1:{tracebox.server.port}/api/v4/error_tracking/collector/\d+",
        dsn,
    )

    run_program(program, dsn)
    # The first-run page polls (htmx) and reloads itself when the first error arrives.
    row = page.get_by_role("link", name=TITLE)
    expect(row).to_be_visible(timeout=30_000)
    error_row = page.locator("tr", has=row)
    events_cell = error_row.locator("td.num").first
    two = re.compile(r"^\s*(Events)?\s*2\s*$")  # one error, 2 events (maybe 2 batches)
    reload_until(page, lambda: bool(two.match(events_cell.inner_text(timeout=5_000))))
    expect(events_cell).to_have_text(two)
    expect(error_row.locator("svg.spark")).to_have_count(1)

    row.click()
    expect(page.get_by_role("heading", name=TITLE, level=1)).to_be_visible()
    stack = page.locator("section", has=page.get_by_role("heading", name="Stack trace"))
    frames = stack.locator("li.frame.in-app")
    expect(frames.first).to_contain_text("validate_quantity")  # newest frame first
    expect(frames.nth(1)).to_contain_text("process_order")
    expect(stack.locator(".src-line.current").first).to_contain_text("raise ValueError")
    summary = page.get_by_role("region", name="Summary")
    expect(summary.get_by_text("shop@2.3.4").first).to_be_visible()  # first/last seen release

    page.get_by_role("button", name="Resolve").click()
    expect(page.get_by_text("was resolved")).to_be_visible()
    expect(page.locator(".error-meta .badge", has_text="Resolved")).to_be_visible()
    page.get_by_role("link", name="Error Tracking").first.click()
    expect(page.get_by_role("link", name=TITLE)).to_have_count(0)  # Unresolved is the default
    page.get_by_role("link", name="Resolved", exact=True).click()
    expect(page).to_have_url(re.compile(r"query=is%3Aresolved"))
    expect(page.get_by_role("link", name=TITLE)).to_be_visible()

    run_program(program, dsn)  # a new event of a resolved error: a regression
    page.goto(f"{base}/{path}/-/error_tracking")
    regressed = page.locator("tr", has=page.get_by_role("link", name=TITLE))
    four = re.compile(r"^\s*(Events)?\s*4\s*$")
    # The run's two events may reach the list in two digest batches: wait for both.
    reload_until(
        page,
        lambda: (
            bool(regressed.locator(".badge", has_text="Regressed").count())
            and bool(four.match(regressed.locator("td.num").first.inner_text(timeout=5_000)))
        ),
    )
    expect(regressed.locator(".badge", has_text="Regressed")).to_be_visible()
    expect(regressed.locator("td.num").first).to_have_text(four)


def test_send_test_event_button(root_page: Page, tracebox: Tracebox) -> None:
    page = root_page
    create_project(page, tracebox.url, "Probe")
    page.get_by_role("button", name="Send a test event").click()
    expect(page.get_by_text("A test event was sent.")).to_be_visible()
    expect(page.get_by_role("link", name=re.compile("TraceboxTestError"))).to_be_visible(
        timeout=30_000
    )
