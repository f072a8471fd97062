"""The list, details and "My errors" pages: search with its errors, saved searches, the
remembered environment, triage forms, the timeline and safe Markdown comments."""

from __future__ import annotations

import re
import time
from html import unescape

import pytest

from tests.inprocess import Ui, exception_event
from tracebox.models import AccessLevel, Project, User


@pytest.fixture
def site(ui: Ui) -> tuple[Ui, Project, User]:
    owner = ui.user("owner")
    project = ui.project("acme/web", owner)
    now = time.time()
    ui.events(
        project,
        exception_event("Boom", "in prod", environment="production", timestamp=now - 5),
        exception_event("Crash", "in staging", environment="staging", release="web@2.0.0"),
    )
    ui.sign_in(owner)
    return ui, project, owner


def rows(html: str) -> list[str]:
    return re.findall(r'class="error-title" href="[^"]+">([^<]+)<', html)


def test_search_box_and_its_errors(site: tuple[Ui, Project, User]) -> None:
    ui, _, _ = site
    page = ui.client.get("/acme/web/-/error_tracking", params={"query": "environment:staging"})
    assert [unescape(t) for t in rows(page.text)] == ["Crash: in staging"]
    bad = ui.client.get("/acme/web/-/error_tracking", params={"query": "level:nope crash"})
    assert bad.status_code == 200 and rows(bad.text) == []
    assert 'id="search-error" role="alert"' in bad.text
    assert "Query is invalid at position 7: level: to be one of fatal" in unescape(bad.text)
    assert '<span>level:</span><mark class="caret" title="position 7">n</mark>' in bad.text
    assert 'aria-invalid="true"' in bad.text


def test_saved_searches_and_the_legacy_parameters(site: tuple[Ui, Project, User]) -> None:
    ui, _, _ = site
    page = ui.client.get("/acme/web/-/error_tracking")
    for label, query in (("For review", "is%3Afor_review"), ("All", "")):
        assert f'href="/acme/web/-/error_tracking?query={query}"' in page.text, label
    old = ui.client.get("/acme/web/-/error_tracking", params={"status": "all", "search": "boom"})
    assert [unescape(t) for t in rows(old.text)] == ["Boom: in prod"]


def test_environment_is_remembered_per_user_and_project(site: tuple[Ui, Project, User]) -> None:
    ui, _, _ = site
    chosen = ui.client.get("/acme/web/-/error_tracking", params={"environment": "production"})
    assert [unescape(t) for t in rows(chosen.text)] == ["Boom: in prod"]
    again = ui.client.get("/acme/web/-/error_tracking")
    assert [unescape(t) for t in rows(again.text)] == ["Boom: in prod"]
    assert '<option value="production" selected>' in again.text
    releases = ui.client.get("/acme/web/-/error_tracking/releases")
    assert '<option value="production" selected>' in releases.text
    cleared = ui.client.get("/acme/web/-/error_tracking", params={"environment": ""})
    assert len(rows(cleared.text)) == 2


def error_id(ui: Ui, title: str) -> int:
    page = ui.client.get("/acme/web/-/error_tracking", params={"query": ""})
    found = re.search(r'href="/acme/web/-/error_tracking/(\d+)">' + re.escape(title), page.text)
    assert found, page.text
    return int(found.group(1))


def test_details_triage_timeline_and_safe_comments(site: tuple[Ui, Project, User]) -> None:
    ui, _, _ = site
    e = error_id(ui, "Crash: in staging")
    here = f"/acme/web/-/error_tracking/{e}"
    page = ui.client.get(here)
    assert "staging" in page.text and "1 events" in page.text  # counts per environment
    r = ui.post(here + "/assign", {"assignee": "me"}, page=here)
    assert r.status_code == 303
    r = ui.post(
        here + "/status",
        {"status": "resolved", "resolution": "in_next_release"},
        page=here,
    )
    assert r.status_code == 303
    evil = (
        "**bold** <script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3))"
    )
    r = ui.post(here + "/comments", {"body": evil}, page=here)
    assert r.status_code == 303 and "#comment-" in r.headers["location"]
    page = ui.client.get(here).text
    assert 'Resolved in the next release after <span class="mono">web@2.0.0</span>' in page
    assert "assigned this error to owner" in page
    assert "resolved this error in the next release (after web@2.0.0)" in page
    body = re.search(r'<div class="comment-body">(.*?)</div>', page, re.S)
    assert body is not None
    assert "<strong>bold</strong>" in body.group(1)
    assert "<script" not in body.group(1) and "<img" not in body.group(1)
    assert "javascript:" not in body.group(1).replace("[x](javascript:alert(3))", "")
    assert rows(ui.client.get("/dashboard/errors").text) == []  # resolved: not unresolved
    mine = ui.client.get("/dashboard/errors", params={"status": "all"})
    assert [unescape(t) for t in rows(mine.text)] == ["Crash: in staging"]


def test_bulk_bar(site: tuple[Ui, Project, User]) -> None:
    ui, _, _ = site
    ids = [error_id(ui, "Boom: in prod"), error_id(ui, "Crash: in staging")]
    r = ui.post(
        "/acme/web/-/error_tracking/bulk",
        {"action": "ignore", "ids": [str(i) for i in ids]},
        page="/acme/web/-/error_tracking",
    )
    assert r.status_code == 303
    assert rows(ui.client.get("/acme/web/-/error_tracking").text) == []
    r = ui.post(
        "/acme/web/-/error_tracking/bulk",
        {"action": "unresolve", "all": "1", "query": "is:ignored boom"},
        page="/acme/web/-/error_tracking",
    )
    listed = ui.client.get("/acme/web/-/error_tracking").text
    assert "1 error changed." in listed
    assert [unescape(t) for t in rows(listed)] == ["Boom: in prod"]


def test_reporters_see_no_triage_controls_but_may_comment(site: tuple[Ui, Project, User]) -> None:
    ui, project, _ = site
    reader = ui.user("reader")
    ui.member(project, reader, AccessLevel.REPORTER)
    ui.client.cookies.clear()
    ui.sign_in(reader)
    e = error_id(ui, "Boom: in prod")
    page = ui.client.get(f"/acme/web/-/error_tracking/{e}").text
    assert 'id="bulk-form"' not in ui.client.get("/acme/web/-/error_tracking").text
    assert "/assign" not in page and 'name="body"' in page
    here = f"/acme/web/-/error_tracking/{e}"
    assert ui.post(here + "/assign", {"assignee": "me"}, page=here).status_code == 403


def test_merge_from_the_list_and_unmerge_from_the_details(site: tuple[Ui, Project, User]) -> None:
    ui, _, _ = site
    boom, crash = error_id(ui, "Boom: in prod"), error_id(ui, "Crash: in staging")
    r = ui.post(
        "/acme/web/-/error_tracking/bulk",
        {"action": "merge", "ids": [str(boom), str(crash)]},
        page="/acme/web/-/error_tracking",
    )
    assert r.status_code == 303
    merged = int(r.headers["location"].rsplit("/", 1)[1])
    page = ui.client.get(r.headers["location"]).text
    assert "2 errors were merged into this one." in page
    assert "merged 1 error into this one" in page
    other = crash if merged == boom else boom
    old = ui.client.get(f"/acme/web/-/error_tracking/{other}", follow_redirects=False)
    assert old.status_code == 303 and old.headers["location"].endswith(f"/{merged}")
    fingerprints = re.findall(r'name="grouping_hash" value="([0-9a-f]{32})"', page)
    assert len(fingerprints) == 1  # the error's own hash has no Unmerge button
    here = f"/acme/web/-/error_tracking/{merged}"
    r = ui.post(here + "/unmerge", {"grouping_hash": fingerprints[0]}, page=here)
    assert r.status_code == 303
    assert "The fingerprint was unmerged" in ui.client.get(r.headers["location"]).text
    assert len(rows(ui.client.get("/acme/web/-/error_tracking").text)) == 2
