"""Driving Debian's chromium with Playwright: never a downloaded browser."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Browser, Page, Playwright, expect

CHROMIUM = Path(os.environ.get("TRACEBOX_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def launch_browser(pw: Playwright) -> Browser:
    return pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


def sign_in(page: Page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/users/sign_in")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


def create_project(page: Page, base: str, name: str, *, tracking: bool = True) -> str:
    """Create a project through the form; returns its full path (``root/<name>``)."""
    page.goto(f"{base}/projects")
    page.get_by_role("link", name="New project").click()
    page.get_by_label("Project name").fill(name)
    checkbox = page.get_by_label("Enable error tracking")
    if checkbox.is_checked() != tracking:
        checkbox.click()
    page.get_by_role("button", name="Create project").click()
    expect(page.get_by_text(f"Project {name} was created.")).to_be_visible()
    path = page.url.split(base + "/", 1)[1].split("/-/", 1)[0]
    return path


def create_user(page: Page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/admin/users")
    page.get_by_role("link", name="New user").click()
    page.get_by_label("Name", exact=True).fill(username.title())
    page.get_by_label("Username").fill(username)
    page.get_by_label("Email").fill(f"{username}@example.com")
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Create user").click()
    expect(page.get_by_text(f"User {username} was created.")).to_be_visible()


def add_member(page: Page, base: str, project: str, username: str, role: str) -> None:
    page.goto(f"{base}/{project}/-/project_members")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Role", exact=True).select_option(label=role)
    page.get_by_role("button", name="Add member").click()
    expect(page.get_by_text(f"{username} was added as {role}.")).to_be_visible()


def csrf_token(page: Page) -> str:
    """The CSRF token of the page's forms (every page has the sign-out form)."""
    token = page.locator("input[name=_csrf]").first.get_attribute("value")
    assert token
    return token


def reload_until(page: Page, shown: str | Callable[[], bool], *, timeout_s: float = 30.0) -> None:
    """Reload until ``shown`` (a text on the page, or a check of the page) holds: events
    reach the list through the digest, one batch at a time."""
    import time

    holds = shown if callable(shown) else lambda: bool(page.get_by_text(shown).count())
    deadline = time.monotonic() + timeout_s
    while True:
        if holds():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{shown!r} did not hold within {timeout_s}s")
        page.wait_for_timeout(300)
        page.reload()


def project_dsn(page: Page, base: str, path: str) -> str:
    page.goto(f"{base}/{path}/-/settings/monitor")
    value = page.get_by_role("textbox", name="DSN", exact=True).input_value()
    assert value
    return value


def send_event(page: Page, base: str, path: str, event: dict[str, object]) -> str:
    """Send one raw event to the store endpoint with the project's DSN (as an SDK would)."""
    import uuid

    import httpx

    dsn = project_dsn(page, base, path)
    key, project_id = dsn.split("//", 1)[1].split("@", 1)[0], dsn.rsplit("/", 1)[1]
    body = {"event_id": uuid.uuid4().hex, "platform": "python", **event}
    response = httpx.post(
        f"{base}/api/{project_id}/store/",
        json=body,
        headers={"X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={key}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    return str(body["event_id"])
