"""Issue 15's walk in real headless Chromium, with events from the real Python SDK sent
over HTTP to a live server: search, assign to me (keyboard), comment, resolve in the
next release, and an event of the next release reopens it with an activity entry. Then
script injection in a comment stays inert."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import sentry_sdk
from playwright.sync_api import Page, expect

from tests.browser.conftest import Tracebox
from tests.browser.harness import create_project, reload_until

pytestmark = pytest.mark.slow
DECLINED = "ValueError: payment declined"
SKU = "KeyError: 'missing sku'"


def send(dsn: str, exc: Exception, **options: Any) -> None:
    """One error through the real SDK and its HTTP transport, delivered before returning."""
    tags = options.pop("tags", {})
    sentry_sdk.init(dsn=dsn, default_integrations=False, **options)
    try:
        with sentry_sdk.isolation_scope() as scope:
            for key, value in tags.items():
                scope.set_tag(key, value)
            try:
                raise exc
            except Exception as e:
                sentry_sdk.capture_exception(e)
        sentry_sdk.flush(timeout=10)
    finally:
        sentry_sdk.get_client().close()


@pytest.fixture
def triage(
    root_page: Page, tracebox: Tracebox, request: pytest.FixtureRequest
) -> Iterator[tuple[Page, str, str]]:
    page, base = root_page, tracebox.url
    name = "Triage" + request.node.name.split("_")[-1].title()  # one project per test
    path = create_project(page, base, name)
    dsn = page.get_by_role("textbox", name="Data Source Name (DSN)").input_value()
    send(dsn, ValueError("payment declined"), release="shop@1.0.0", environment="production")
    send(dsn, KeyError("missing sku"), release="shop@1.0.0", environment="staging")
    expect(page.get_by_role("link", name=SKU)).to_be_visible(timeout=30_000)
    yield page, f"{base}/{path}/-/error_tracking", dsn


def search(page: Page, query: str) -> None:
    box = page.get_by_role("searchbox", name="Search errors")
    box.fill(query)
    box.press("Enter")


def test_search_assign_comment_resolve_in_next_release_and_reopen(
    triage: tuple[Page, str, str],
) -> None:
    page, list_url, dsn = triage
    search(page, "environment:staging")
    expect(page.get_by_role("link", name=SKU)).to_be_visible()
    expect(page.get_by_role("link", name=DECLINED)).to_have_count(0)
    search(page, "is:unresolved level:")
    expect(page.get_by_role("alert")).to_contain_text(
        "Query is invalid at position 21: a value after level:"
    )
    search(page, "is:unresolved declined")
    expect(page.get_by_role("link", name=DECLINED)).to_be_visible()
    expect(page.get_by_role("link", name=SKU)).to_have_count(0)
    row = page.locator("tr.error-row", has=page.get_by_role("link", name=DECLINED))

    page.keyboard.press("Escape")  # out of the search box: keys now reach the list
    page.keyboard.press("j")  # select the first (only) row
    expect(row).to_have_class(re.compile("selected"))
    page.keyboard.press("a")  # assign it to me
    expect(row.locator(".assignee")).to_have_attribute("title", "Assigned to root")
    page.get_by_role("link", name="Assigned to me").click()
    expect(page.get_by_role("searchbox", name="Search errors")).to_have_value(
        "is:unresolved assigned:me"
    )
    expect(page.get_by_role("link", name=DECLINED)).to_be_visible()
    page.keyboard.press("j")
    page.keyboard.press("o")  # open it
    expect(page.get_by_role("heading", name=DECLINED, level=1)).to_be_visible()

    page.get_by_label("Comment").fill("Fixed by **PR 12**; deploying `shop@1.1.0`.")
    page.get_by_role("button", name="Comment", exact=True).click()
    timeline = page.locator("#activity")
    expect(timeline.locator(".comment-body strong")).to_have_text("PR 12")
    expect(timeline).to_contain_text("assigned this error to root")

    page.get_by_text("Resolve in…").click()
    page.get_by_role("button", name="The next release (after shop@1.0.0)").click()
    expect(page.locator(".status-line")).to_contain_text(
        "Resolved in the next release after shop@1.0.0"
    )

    send(dsn, ValueError("payment declined"), release="shop@1.0.0", environment="production")
    page.goto(list_url + "?query=is%3Aresolved+times-seen%3A2")
    reload_until(page, DECLINED)  # digested: 2 events now, and still resolved
    send(dsn, ValueError("payment declined"), release="shop@1.1.0", environment="production")
    page.goto(list_url + "?query=is%3Aregressed")
    reload_until(page, DECLINED)
    page.get_by_role("link", name=DECLINED).click()
    expect(page.locator(".error-meta .badge", has_text="Unresolved")).to_be_visible()
    expect(timeline.locator(".timeline-entry").last).to_contain_text(
        "Tracebox marked this error as a regression: an event of release shop@1.1.0"
    )


def test_script_in_a_comment_is_inert(triage: tuple[Page, str, str]) -> None:
    page, _, _ = triage
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.get_by_role("link", name=SKU).click()
    evil = (
        '<script>window.__xss = 1; alert(1)</script> <img src=x onerror="window.__xss=2">'
        ' [click](javascript:window.__xss=3) <a href="javascript:alert(4)">a</a>'
        ' <svg onload="window.__xss=5"></svg> **still bold**'
    )
    page.get_by_label("Comment").fill(evil)
    page.get_by_role("button", name="Comment", exact=True).click()
    body = page.locator("#activity .comment-body").last
    expect(body.locator("strong")).to_have_text("still bold")
    expect(body.locator("script, img, svg, [onerror], [onload]")).to_have_count(0)
    for link in body.locator("a").all():
        assert not (link.get_attribute("href") or "").lower().startswith("javascript:")
    page.reload()
    assert page.evaluate("window.__xss") is None and dialogs == []
