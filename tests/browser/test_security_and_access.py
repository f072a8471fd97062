"""Untrusted event content renders inert; the Content-Security-Policy holds on every
page; pages work without JavaScript, on a phone's width, and from the keyboard."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, expect

from tests.browser.conftest import Tracebox
from tests.browser.harness import create_project, reload_until, send_event, sign_in

pytestmark = pytest.mark.slow

SCRIPT = "<script>window.__pwned = 1</script>"
IMG = '<img src=x onerror="window.__pwned = 2">'
JS_URL = "javascript:window.__pwned=3"


def hostile_event() -> dict[str, object]:
    return {
        "level": "error",
        "message": f"message {SCRIPT}",
        "exception": {
            "values": [
                {
                    "type": "XSSError",
                    "value": f"value {SCRIPT} {IMG}",
                    "stacktrace": {
                        "frames": [
                            {
                                "filename": f"{IMG}.py",
                                "function": SCRIPT,
                                "lineno": 1,
                                "in_app": True,
                                "context_line": f"    eval('{SCRIPT}')",
                            }
                        ]
                    },
                }
            ]
        },
        "tags": {"evil": SCRIPT, "link": JS_URL},
        "breadcrumbs": [
            {"timestamp": 1.0, "category": SCRIPT, "message": IMG, "data": {"url": JS_URL}}
        ],
        "request": {"url": JS_URL, "method": "GET", "headers": {"Referer": JS_URL, "X": SCRIPT}},
        "user": {"email": f"{IMG}@example.com", "id": JS_URL},
        "contexts": {"browser": {"name": SCRIPT}},
    }


def test_script_injection_renders_inert(root_page: Page, tracebox: Tracebox) -> None:
    page, base = root_page, tracebox.url
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    path = create_project(page, base, "Hostile")
    send_event(page, base, path, hostile_event())
    page.goto(f"{base}/{path}/-/error_tracking")
    reload_until(page, "XSSError")  # the event reaches the list through the digest
    title = page.get_by_role("link", name=re.compile("^XSSError"))
    expect(title).to_be_visible()
    expect(title).to_contain_text(SCRIPT)  # shown as text
    title.click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(SCRIPT)
    page.get_by_text("Headers (2)").click()
    for text in (IMG, JS_URL, f"message {SCRIPT}"):
        expect(page.get_by_text(text, exact=False).first).to_be_visible()
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []
    # Only our two script files exist; no element carries an event handler or a js: URL.
    assert page.locator("script").count() == 2
    assert page.locator("script:not([src])").count() == 0
    assert page.locator("img").count() == 0
    assert page.locator("[onerror], [onclick], [onload]").count() == 0
    assert page.locator('a[href^="javascript:"]').count() == 0


def test_content_security_policy_holds(root_page: Page, tracebox: Tracebox) -> None:
    page, base = root_page, tracebox.url
    violations: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text or message.type == "error":
            violations.append(message.text)

    page.on("console", on_console)
    path = create_project(page, base, "Policy")
    send_event(page, base, path, {"exception": {"values": [{"type": "E", "value": "v"}]}})
    response = page.goto(f"{base}/{path}/-/error_tracking")
    assert response is not None
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert response.headers["x-frame-options"] == "DENY"
    expect(page.get_by_role("link", name="E: v")).to_be_visible(timeout=30_000)
    for suffix in (
        "error_tracking",
        "error_tracking/releases",
        "settings/monitor",
        "project_members",
    ):
        page.goto(f"{base}/{path}/-/{suffix}")
    page.goto(f"{base}/{path}/-/error_tracking")
    page.get_by_role("link", name="E: v").click()
    page.goto(f"{base}/{path}/-/error_tracking")
    page.get_by_role("link", name="Resolved", exact=True).click()  # an htmx swap
    expect(page).to_have_url(re.compile(r"query=is%3Aresolved"))
    expect(page.get_by_role("link", name="Resolved", exact=True)).to_have_attribute(
        "aria-current", "page"
    )
    assert violations == []
    cookie = next(c for c in page.context.cookies() if c["name"] == "tracebox_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"


def test_pages_work_without_javascript(browser: Browser, tracebox: Tracebox) -> None:
    page = browser.new_context(java_script_enabled=False).new_page()
    base = tracebox.url
    sign_in(page, base, "root", tracebox.root_password)
    path = create_project(page, base, "No script")
    expect(page.get_by_role("textbox", name="Data Source Name (DSN)")).to_be_visible()
    expect(page.get_by_role("button", name="Copy Data Source Name (DSN)")).to_be_hidden()
    send_event(page, base, path, {"exception": {"values": [{"type": "PlainError", "value": "x"}]}})
    page.goto(f"{base}/{path}/-/error_tracking")
    reload_until(page, "PlainError: x")  # no JavaScript: no polling either
    page.get_by_label("Sort by").select_option("frequency")
    page.get_by_role("button", name="Search").click()  # a plain GET form
    expect(page).to_have_url(re.compile("sort=frequency"))
    page.get_by_role("button", name="Ignore PlainError: x").click()  # a plain POST form
    expect(page.get_by_text("was ignored")).to_be_visible()
    expect(page.get_by_role("link", name="PlainError: x")).to_have_count(0)
    page.get_by_role("link", name="Ignored", exact=True).click()
    expect(page.get_by_role("link", name="PlainError: x")).to_be_visible()
    page.context.close()


def test_phone_width_and_keyboard(browser: Browser, tracebox: Tracebox) -> None:
    page = browser.new_context(viewport={"width": 375, "height": 740}).new_page()
    base = tracebox.url
    sign_in(page, base, "root", tracebox.root_password)
    path = create_project(page, base, "Phone")
    page.goto(f"{base}/{path}/-/error_tracking")  # the first-run page, with its snippets
    page.wait_for_load_state()
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the first-run page scrolls sideways by {overflow}px at 375px"
    send_event(
        page, base, path, {"exception": {"values": [{"type": "LongError", "value": "y" * 300}]}}
    )
    page.goto(f"{base}/{path}/-/error_tracking")
    reload_until(page, "LongError")  # the event reaches the list through the digest
    for suffix in ("error_tracking", "settings/monitor", "project_members"):
        page.goto(f"{base}/{path}/-/{suffix}")
        page.wait_for_load_state()
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{suffix} scrolls sideways by {overflow}px at 375px"

    page.goto(f"{base}/{path}/-/error_tracking")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to main content"
    page.keyboard.press("Enter")
    link = page.get_by_role("link", name=re.compile("^LongError"))
    link.wait_for(timeout=30_000)
    for _ in range(40):  # the error link is reachable with Tab alone
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('error-title')"):
            break
    else:
        raise AssertionError("the error link is not reachable by keyboard")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Stack trace")).to_be_visible()
    page.context.close()
