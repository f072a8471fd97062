"""Each event tells its own story: two events of one error with different messages each
show their own title on the details page, while the list keeps the error's latest."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Tracebox
from tests.browser.harness import create_project, reload_until, send_event

pytestmark = pytest.mark.slow


def warning(value: str, timestamp: float) -> dict[str, object]:
    frames = [{"filename": "app/run.py", "function": "main", "lineno": 7, "in_app": True}]
    return {
        "timestamp": timestamp,
        "level": "warning",
        "exception": {
            "values": [{"type": "Warning", "value": value, "stacktrace": {"frames": frames}}]
        },
    }


def test_each_event_shows_its_own_title(root_page: Page, tracebox: Tracebox) -> None:
    page, base = root_page, tracebox.url
    path = create_project(page, base, "Stories")
    now = time.time()
    send_event(page, base, path, warning("file_get_contents(): failed to open stream", now - 60))
    send_event(page, base, path, warning("Undefined variable $total", now - 30))
    page.goto(f"{base}/{path}/-/error_tracking")
    reload_until(page, "Warning: Undefined variable $total")
    page.get_by_role("link", name="Warning: Undefined variable $total").click()
    expect(page.locator(".stat-value").first).to_have_text("2")  # one error, two events
    expect(page.locator("#event-title")).to_contain_text("Warning: Undefined variable $total")
    page.get_by_role("link", name="Older ›").click()
    expect(page.locator("#event-title")).to_contain_text(
        "Warning: file_get_contents(): failed to open stream"
    )
    expect(page.locator("#event-title")).not_to_contain_text("$total")
    page.get_by_role("link", name="‹ Newer").click()
    expect(page.locator("#event-title")).to_contain_text("Warning: Undefined variable $total")
