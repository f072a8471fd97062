"""The error list and details pages through ``ErrorSource``, in-process."""

from __future__ import annotations

import copy
import html
import re
import time

import pytest

from tests.inprocess import Ui, exception_event
from tracebox.models import AccessLevel, Project, User
from tracebox.store import errors_read


@pytest.fixture
def owner(ui: Ui) -> User:
    user = ui.user("owner")
    ui.sign_in(user)
    return user


@pytest.fixture
def project(ui: Ui, owner: User) -> Project:
    return ui.project("acme/web", owner)


def list_titles(text: str) -> list[str]:
    return [html.unescape(t) for t in re.findall(r'class="error-title"[^>]*>([^<]*)<', text)]


def error_ids(text: str) -> list[int]:
    return [int(i) for i in re.findall(r'/-/error_tracking/(\d+)"', text)]


def test_list_defaults_to_unresolved_newest_first(ui: Ui, project: Project) -> None:
    now = time.time()
    ui.events(project, exception_event("Old", "v", timestamp=now - 600))
    ui.events(project, exception_event("New", "v", timestamp=now - 60))
    page = ui.client.get("/acme/web/-/error_tracking")
    assert page.status_code == 200
    assert list_titles(page.text) == ["New: v", "Old: v"]
    assert 'aria-current="page">Unresolved<' in page.text
    assert page.text.count('<svg class="spark"') == 2
    old_id = error_ids(page.text)[-1]
    ui.post(f"/acme/web/-/error_tracking/{old_id}/status", {"status": "resolved"})
    assert list_titles(ui.client.get("/acme/web/-/error_tracking").text) == ["New: v"]
    resolved = ui.client.get("/acme/web/-/error_tracking?status=resolved").text
    assert list_titles(resolved) == ["Old: v"]
    everything = ui.client.get("/acme/web/-/error_tracking?status=all&sort=first_seen").text
    assert list_titles(everything) == ["New: v", "Old: v"]


def test_search_sort_and_keyset_pages(ui: Ui, project: Project) -> None:
    now = time.time()
    for i in range(25):
        ui.events(project, exception_event(f"Error{i:02d}", "v", timestamp=now - 1000 + i))
    ui.events(project, *[exception_event("Busy", "v", timestamp=now - 5000) for _ in range(3)])
    first = ui.client.get("/acme/web/-/error_tracking").text
    assert len(list_titles(first)) == 20
    next_link = re.search(r'rel="next" href="([^"]+)"', first)
    assert next_link
    second = ui.client.get(html.unescape(next_link.group(1))).text
    assert set(list_titles(first)).isdisjoint(list_titles(second))
    assert len(list_titles(first)) + len(list_titles(second)) == 26
    assert list_titles(ui.client.get("/acme/web/-/error_tracking?search=error07").text) == [
        "Error07: v"
    ]
    by_frequency = ui.client.get("/acme/web/-/error_tracking?sort=frequency").text
    assert list_titles(by_frequency)[0] == "Busy: v"
    assert ui.client.get("/acme/web/-/error_tracking?cursor=garbage").status_code == 400
    nothing = ui.client.get("/acme/web/-/error_tracking?search=nothing-like-this").text
    assert "No errors to display" in nothing


def test_regressed_errors_are_marked(ui: Ui, project: Project) -> None:
    ui.events(project, exception_event("Again", "v"))
    error_id = error_ids(ui.client.get("/acme/web/-/error_tracking").text)[0]
    ui.post(f"/acme/web/-/error_tracking/{error_id}/status", {"status": "resolved"})
    ui.events(project, exception_event("Again", "v"))
    page = ui.client.get("/acme/web/-/error_tracking").text
    assert "Regressed" in page and list_titles(page) == ["Again: v"]
    details = ui.client.get(f"/acme/web/-/error_tracking/{error_id}").text
    assert "Regressed" in details


def test_first_run_shows_the_dsn_to_maintainers_only(ui: Ui, project: Project) -> None:
    page = ui.client.get("/acme/web/-/error_tracking").text
    assert "Waiting for the first error" in page
    dsn = re.search(r'id="dsn" type="text" class="mono" value="([^"]+)"', page)
    assert (
        dsn
        and dsn.group(1).startswith("http://")
        and "/api/v4/error_tracking/collector/" in dsn.group(1)
    )
    for language in ("Python", "Node.js", "Go", "Java", "Ruby", "PHP", "Rust"):
        assert f"<summary>{language}</summary>" in page
    assert dsn.group(1) in page.split("pip install sentry-sdk", 1)[1]  # in the snippets too
    assert "Send a test event" in page
    dev = ui.user("dev")
    ui.member(project, dev, AccessLevel.DEVELOPER)
    ui.sign_in(dev)
    page = ui.client.get("/acme/web/-/error_tracking").text
    assert "Ask a Maintainer of this project for the DSN" in page
    assert dsn.group(1) not in page and "Send a test event" not in page


def test_send_test_event_goes_through_ingestion(ui: Ui, project: Project) -> None:
    r = ui.post("/acme/web/-/error_tracking/test_event", {}, page="/acme/web/-/error_tracking")
    assert r.status_code == 303
    page = ui.client.get(r.headers["location"]).text
    assert "A test event was sent." in page
    spooled = b"".join(p.read_bytes() for p in ui.settings.spool_dir.rglob("*") if p.is_file())
    assert b"TraceboxTestError" in spooled  # accepted by the store endpoint, spooled


def test_first_run_probe_refreshes_once_an_error_exists(ui: Ui, project: Project) -> None:
    probe = {"HX-Request": "true", "HX-Target": "first-error-probe"}
    waiting = ui.client.get("/acme/web/-/error_tracking", headers=probe)
    assert "HX-Refresh" not in waiting.headers and 'id="first-error-probe"' in waiting.text
    ui.events(project, exception_event())
    arrived = ui.client.get("/acme/web/-/error_tracking", headers=probe)
    assert arrived.headers["HX-Refresh"] == "true"


def test_inactive_tracking_invites_to_enable_it(ui: Ui, owner: User) -> None:
    ui.project("acme/off", owner, tracking=False)
    page = ui.client.get("/acme/off/-/error_tracking").text
    assert "Get started with error tracking" in page and "Enable error tracking" in page


def test_details_show_the_event_newest_frame_first(ui: Ui, project: Project) -> None:
    now = time.time()
    cause = {
        "type": "KeyError",
        "value": "'sku'",
        "stacktrace": {
            "frames": [{"function": "lookup", "filename": "app/stock.py", "in_app": True}]
        },
    }
    event = exception_event(
        "ValueError",
        "bad quantity",
        timestamp=now - 30,
        message="checkout failed",
        breadcrumbs=[{"timestamp": now - 40, "category": "http", "message": "GET /cart"}],
        request={
            "method": "POST",
            "url": "https://shop.example/checkout",
            "headers": {"Accept": "text/html"},
        },
        contexts={"os": {"name": "Linux"}},
        sdk={"name": "sentry.python", "version": "2.0.0"},
    )
    main = event["exception"]["values"][0]
    event["exception"]["values"] = [cause, main]
    earlier = copy.deepcopy(event)
    earlier.update(timestamp=now - 90, message="an earlier event")
    ui.events(project, earlier, event)
    error_id = error_ids(ui.client.get("/acme/web/-/error_tracking").text)[0]
    page = ui.client.get(f"/acme/web/-/error_tracking/{error_id}").text
    assert '<h1 class="error-h1">ValueError: bad quantity</h1>' in page
    functions = re.findall(r'class="frame-fn mono">([^<]+)<', page)
    assert functions == ["handle", "main", "dispatch", "lookup"]  # newest first, then the cause
    assert page.index("Caused by") < page.index(">KeyError<")
    assert "1 library frame</summary>" in page  # collapsed
    assert re.search(
        r'<details open>\s*<summary><span class="frame-file mono">app/handlers.py', page
    )
    assert "checkout failed" in page and "GET /cart" in page
    assert "https://shop.example/checkout" in page and "Headers (1)" in page
    assert "sentry.python" in page and "Linux" in page
    assert "browser" in page and "Firefox" in page  # tags
    assert "web@1.0.0" in page  # first and last release
    assert "Last 24 hours" in page and "Last 30 days" in page
    # Step to the older event and back.
    older = re.search(r'rel="next" href="([^"]+)"', page)
    assert older and 'aria-disabled="true">‹ Newer' in page
    older_page = ui.client.get(html.unescape(older.group(1))).text
    assert "checkout failed" not in older_page and ">Latest</a>" in older_page
    newer = re.search(r'rel="prev" href="([^"]+)"', older_page)
    assert newer
    assert "checkout failed" in ui.client.get(html.unescape(newer.group(1))).text


def test_event_content_is_escaped_server_side(ui: Ui, project: Project) -> None:
    script = "<script>alert(1)</script>"
    ui.events(
        project,
        exception_event(
            "XSS",
            script,
            tags={"t": script},
            breadcrumbs=[{"timestamp": 1.0, "message": script, "data": {"u": script}}],
            request={"url": "javascript:alert(1)", "headers": {"H": script}},
            user={"id": script},
        ),
    )
    listing = ui.client.get("/acme/web/-/error_tracking").text
    error_id = error_ids(listing)[0]
    page = ui.client.get(f"/acme/web/-/error_tracking/{error_id}").text
    for text in (listing, page):
        assert script not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert 'href="javascript:' not in page


def test_status_changes_follow_the_policy(ui: Ui, owner: User, project: Project) -> None:
    ui.events(project, exception_event())
    error_id = error_ids(ui.client.get("/acme/web/-/error_tracking").text)[0]
    token_page = "/acme/web/-/error_tracking"
    reporter, developer, outsider = ui.user("rep"), ui.user("dev"), ui.user("out")
    ui.member(project, reporter, AccessLevel.REPORTER)
    ui.member(project, developer, AccessLevel.DEVELOPER)
    url = f"/acme/web/-/error_tracking/{error_id}/status"
    ui.sign_in(reporter)
    listing = ui.client.get(token_page).text
    assert ">Resolve<" not in listing and ">Ignore<" not in listing and "/status" not in listing
    assert ui.post(url, {"status": "resolved"}, page=token_page).status_code == 403
    ui.sign_in(outsider)
    assert ui.client.get(token_page).status_code == 404
    assert ui.post(url, {"status": "resolved"}).status_code == 404
    ui.sign_in(developer)
    assert ui.post(url, {"status": "bogus"}, page=token_page).status_code == 400
    done = ui.post(
        url,
        {"status": "ignored", "next": "/acme/web/-/error_tracking?sort=frequency"},
        page=token_page,
    )
    assert done.headers["location"] == "/acme/web/-/error_tracking?sort=frequency"
    with ui.db.read() as conn:
        row = errors_read.get_error(conn, project.id, error_id)
    assert row is not None and row.status == "ignored"
    evil = ui.post(url, {"status": "resolved", "next": "https://evil.example/"}, page=token_page)
    assert evil.headers["location"] == f"/acme/web/-/error_tracking/{error_id}"
    ui.sign_in(owner)
    assert ui.client.get(f"/acme/web/-/error_tracking/{error_id + 999}").status_code == 404


def test_monitor_disabled_hides_error_tracking(ui: Ui, project: Project) -> None:
    r = ui.post(
        "/acme/web/-/settings/general",
        {"name": "Web", "monitor_access_level": "disabled"},
        page="/acme/web/-/settings/general",
    )
    assert r.status_code == 303
    assert ui.client.get("/acme/web/-/error_tracking").status_code == 404
    assert ui.client.get("/acme/web/-/error_tracking/releases").status_code == 404
    settings_page = ui.client.get("/acme/web/-/settings/monitor")
    assert settings_page.status_code == 200
    assert "The Monitor feature is disabled" in settings_page.text
    assert "/acme/web/-/settings/general#features" in settings_page.text


def test_releases_page_shows_release_health(ui: Ui, project: Project) -> None:
    from tracebox.store.tables import sessions

    now = time.time()
    rows = [
        {
            "project_id": project.id,
            "sid": f"s{i}",
            "did": f"d{i % 3}",
            "release": "web@2.0",
            "environment": "production",
            "started": now,
            "timestamp": now,
            "seq": 1,
            "status": "crashed" if i == 0 else "exited",
            "errors": 0,
            "duration": 1.0,
        }
        for i in range(8)
    ]
    with ui.db.write() as conn:
        conn.execute(sessions.insert(), rows)
    page = ui.client.get("/acme/web/-/error_tracking/releases").text
    assert "web@2.0" in page and "87.50%" in page  # 7 of 8 sessions crash-free
    assert "66.67%" in page  # 2 of 3 users


def test_gitlab_links_settings_redirect_and_linked_issue(ui: Ui, project: Project) -> None:
    """The GitLab project URL is set on the Monitor page; a linked issue shows on the
    error; Sentry's issue URL (GitLab's "View in Sentry") opens the error's page."""
    ui.events(project, exception_event())
    error_id = error_ids(ui.client.get("/acme/web/-/error_tracking").text)[0]
    monitor = "/acme/web/-/settings/monitor"
    form = {"active": "1", "backend": "integrated"}
    bad = ui.post(monitor, {**form, "gitlab_project_url": "javascript:alert(1)"}, page=monitor)
    assert bad.status_code == 400 and "must be an http or https URL" in bad.text
    good = {**form, "gitlab_project_url": "https://gitlab.example.com/acme/web"}
    assert ui.post(monitor, good, page=monitor).status_code == 303
    assert 'value="https://gitlab.example.com/acme/web"' in ui.client.get(monitor).text
    assert ui.post(monitor, form, page=monitor).status_code == 303  # field absent: kept
    with ui.db.write() as conn:
        url = "https://gitlab.example.com/acme/web/-/issues/4"
        assert errors_read.set_external_issue(conn, project.id, error_id, url)
    details = ui.client.get(f"/acme/web/-/error_tracking/{error_id}").text
    assert 'id="linked-issue">https://gitlab.example.com/acme/web/-/issues/4<' in details
    view = ui.client.get(f"/acme/web/issues/{error_id}", follow_redirects=False)
    assert view.status_code == 303
    assert view.headers["location"] == f"/acme/web/-/error_tracking/{error_id}"
