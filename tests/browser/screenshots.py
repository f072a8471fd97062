"""``make screenshots``: PNGs of the error list, details, settings, releases, source-mapped
stack traces, release artifacts, usage, storage settings and admin storage pages, and
what a real sentry-python sends besides the error (local variables, an attachment, user
feedback, logs), in docs/screenshots/, from a live ``tracebox serve`` with demo data, in
headless Chromium.

Run: ``.venv/bin/python -m tests.browser.screenshots [--out docs/screenshots]``
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode

import httpx
import orjson
import sqlalchemy as sa
from playwright.sync_api import Locator, Page, sync_playwright
from sqlalchemy import Connection, select

from tests.alerts.demo import populate_alerts
from tests.browser.demo_data import checkout_event, populate
from tests.browser.harness import launch_browser, reload_until, sign_in
from tests.e2e import sdk_programs
from tests.helpers import free_port, start_server, wait_for
from tests.lifecycle import demo as storage_demo
from tests.privacy import secrets
from tests.sourcemaps import demo as sourcemap_demo
from tracebox.accounts import users
from tracebox.config import Settings
from tracebox.digest.prepare import Preparer
from tracebox.models import AccessLevel, ErrorStatus, Project
from tracebox.privacy import IpMode, PrivacySettings
from tracebox.protocol.event import normalize_event
from tracebox.store import Database, client_keys, members, projects
from tracebox.store import digest as store_digest
from tracebox.store import privacy as privacy_store
from tracebox.store import releases as releases_store
from tracebox.store.tables import errors
from tracebox.tracking import IntegratedSource
from tracebox.tracking import settings as tracking_settings
from tracebox.tracking.models import ErrorChange, Resolution, StatusChange, UserRef

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "screenshots-only-password"
WIDTH, HEIGHT = 1360, 900


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        settings = Settings(
            data_dir=Path(tmp) / "data", external_url=f"http://127.0.0.1:{port}", database_url=""
        )
        os.environ["TRACEBOX_ROOT_PASSWORD"] = PASSWORD
        server = start_server(settings, port=port)
        try:
            path = _data(settings)
            _privacy_demo(settings, server.url, path)
            checkout = _sdk_data(settings, server.url)
            _shoot(server.url, path, args.out)
            _shoot_sdk_data(server.url, checkout, args.out)
        finally:
            server.stop()


def _data(settings: Settings) -> str:
    db = Database(settings.resolved_database_url())
    try:
        with db.write() as conn:
            project = _new_project(conn, "acme/storefront", "Storefront")
        populate(db, project.id)
        _triage(db, project.id)
        populate_alerts(db, settings, project.id, project.path)
        sourcemap_demo.add(db, project.id)
        storage_demo.add(db, settings, project.id)
    finally:
        db.dispose()
    return project.path


def _new_project(conn: Connection, path: str, name: str) -> Project:
    """A project with integrated error tracking, root its owner."""
    project = projects.create(conn, path, name)
    tracking_settings.save(conn, project.id, active=True, integrated=True, create=True)
    members.add(conn, project.id, 1, AccessLevel.OWNER)  # root
    return project


def _triage(db: Database, project_id: int) -> None:
    """A teammate, an assignment, comments, "resolved in the next release" and the
    regression a newer release brought: the details page's timeline."""
    with db.write() as conn:
        maria = users.create_user(
            conn,
            username="maria",
            email="maria@example.com",
            name="Maria Lopez",
            password=PASSWORD,
            is_admin=False,
        )
        members.add(conn, project_id, maria.id, AccessLevel.DEVELOPER)
        featured = (
            conn.execute(
                select(errors.c.id)
                .where(errors.c.project_id == project_id)
                .order_by(errors.c.events_count.desc())
            )
            .scalars()
            .first()
        )
    assert featured is not None
    source = IntegratedSource(db, project_id)
    root, dev = UserRef(1, "root", "Administrator"), UserRef(maria.id, "maria", "Maria Lopez")
    source.update(featured, ErrorChange(assignee=dev), root)
    source.add_comment(
        featured,
        dev,
        "Started with **checkout v2**: the cart lost its `coupon` key when the session "
        "expired.\n\n- reproduced on staging\n- fix in [#482](https://gitlab.example.com/acme/storefront/-/merge_requests/482)",
    )
    with db.write() as conn:  # the storefront's release is the newest: "the next" follows it
        latest = releases_store.ensure(conn, project_id, "storefront@2.4.0", now=time.time())
        releases_store.update_release(conn, latest.id, created_at=time.time())
    resolved = StatusChange(ErrorStatus.RESOLVED, resolution=Resolution.IN_NEXT_RELEASE)
    source.update(featured, ErrorChange(status=resolved), dev)
    source.add_comment(featured, root, "Deployed `storefront@2.5.0` to production.")
    regression = checkout_event(time.time() + 1, 7) | {"release": "storefront@2.5.0"}
    preparer = Preparer()
    prepared = preparer.prepare_event(
        project_id, normalize_event(regression, received_at=time.time(), client_ip="192.0.2.1")
    )
    with db.write() as conn:
        store_digest.write_events(conn, [prepared])


def _privacy_demo(settings: Settings, base: str, path: str) -> None:
    """An event full of secrets, sent through ingestion and the digest like any other,
    with the project's privacy settings changed from the defaults."""
    db = Database(settings.resolved_database_url())
    try:
        with db.write() as conn:
            project = projects.get_by_path(conn, path)
            assert project is not None
            key = client_keys.create(conn, project.id)
            privacy_store.put(
                conn,
                project.id,
                PrivacySettings(sensitive_fields=("order_ref",), ip_mode=IpMode.ANONYMIZE),
            )
        payload = orjson.dumps(secrets.raw_event(uuid.uuid4().hex))
        body = b"\n".join([b"{}", orjson.dumps({"type": "event"}), payload])
        auth = {"X-Sentry-Auth": f"Sentry sentry_key={key.public_key}, sentry_version=7"}
        url = f"{base}/api/{project.id}/envelope/"
        httpx.post(url, content=body, headers=auth, timeout=10).raise_for_status()
        wait_for(lambda: _stored(db) > 0)
    finally:
        db.dispose()


def _sdk_data(settings: Settings, base: str) -> str:
    """A project of its own that the real sentry-python program fills (an exception with
    local variables and an attachment, user feedback, logs of its trace)."""
    db = Database(settings.resolved_database_url())
    try:
        with db.write() as conn:
            project = _new_project(conn, "acme/checkout", "Checkout")
            key = client_keys.create(conn, project.id)
    finally:
        db.dispose()
    host = base.split("//", 1)[1]
    sdk_programs.run(sdk_programs.PYTHON_SDK_DATA, f"http://{key.public_key}@{host}/{project.id}")
    return project.path


def _shoot_sdk_data(base: str, path: str, out: Path) -> None:
    with sync_playwright() as pw:
        browser = launch_browser(pw)
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT}, device_scale_factor=1)
        sign_in(page, base, "root", PASSWORD)
        page.goto(f"{base}/{path}/-/error_tracking")
        reload_until(page, "ValueError: invalid quantity: 7")
        page.get_by_role("link", name="ValueError: invalid quantity: 7").click()
        reload_until(page, "Logs of this trace")
        stack = page.locator("section", has=page.get_by_role("heading", name="Stack trace"))
        _save(page, out / "frame-variables.png", element=stack)
        extras = page.locator("section", has=page.get_by_role("heading", name="Attachments"))
        _save(page, out / "event-attachments.png", element=extras)
        page.goto(f"{base}/{path}/-/logs")
        _save(page, out / "logs.png")
        page.goto(f"{base}/{path}/-/user_feedback")
        _save(page, out / "user-feedback.png")
        browser.close()


def _stored(db: Database) -> int:
    with db.read() as conn:
        return int(
            conn.execute(
                sa.select(sa.func.count())
                .select_from(errors)
                .where(errors.c.title.like("PaymentError%"))
            ).scalar_one()
        )


def _shoot(base: str, path: str, out: Path) -> None:
    with sync_playwright() as pw:
        browser = launch_browser(pw)
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT}, device_scale_factor=1)
        sign_in(page, base, "root", PASSWORD)
        page.goto(f"{base}/{path}/-/error_tracking")
        _save(page, out / "error-list.png")
        href = page.get_by_role("link", name=re.compile("ValueError")).first.get_attribute("href")
        page.goto(f"{base}{href}")
        _save(page, out / "error-details.png", full_page=True)
        query = "is:unresolved level:error release:storefront@2.4.0 environment:production"
        page.goto(f"{base}/{path}/-/error_tracking?" + urlencode({"query": query}))
        _save(page, out / "error-list-query.png")
        page.goto(f"{base}/{path}/-/error_tracking?query=assigned%3Amaria")
        href = page.locator("a.error-title").first.get_attribute("href")
        page.goto(f"{base}{href}")
        page.wait_for_load_state("networkidle")
        page.locator("#activity").screenshot(path=str(out / "error-timeline.png"))
        print(f"wrote {out / 'error-timeline.png'}")
        page.goto(f"{base}/{path}/-/settings/monitor")
        _save(page, out / "settings.png", full_page=True)
        page.goto(f"{base}/{path}/-/settings/privacy")
        _save(page, out / "privacy-settings.png", full_page=True)
        page.goto(f"{base}/{path}/-/error_tracking?status=all&search=PaymentError")
        link = page.get_by_role("link", name=re.compile("PaymentError")).first
        page.goto(f"{base}{link.get_attribute('href')}")
        marker = page.locator("mark.scrubbed").first
        marker.focus()
        _save(page, out / "privacy-marks.png", full_page=True)
        page.goto(f"{base}/{path}/-/error_tracking/releases")
        _save(page, out / "releases.png")
        page.goto(f"{base}/{path}/-/alerts")
        _save(page, out / "alert-rules.png")
        page.get_by_role("link", name="Checkout surges").click()
        _save(page, out / "alert-rule-form.png", full_page=True)
        page.goto(f"{base}/{path}/-/alerts/deliveries")
        _save(page, out / "alert-deliveries.png")
        _source_maps(page, base, path, out)
        _storage(page, base, path, out)
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(f"{base}/{path}/-/error_tracking")
        _save(page, out / "error-list-phone.png")
        browser.close()


def _source_maps(page: Page, base: str, path: str, out: Path) -> None:
    """A TypeError mapped by an uploaded source map; the release's artifacts page."""
    page.goto(f"{base}/{path}/-/error_tracking?search=price")
    page.get_by_role("link", name=re.compile("TypeError")).first.click()
    stack = page.locator("section", has=page.get_by_role("heading", name="Stack trace"))
    stack.scroll_into_view_if_needed()
    _save(page, out / "sourcemap-frames.png", element=stack)
    page.get_by_role("link", name="Show raw (minified) frames").click()
    _save(page, out / "sourcemap-frames-raw.png", element=stack)
    page.goto(f"{base}/{path}/-/error_tracking?search=price")
    page.get_by_role("link", name=re.compile("TypeError")).last.click()  # no upload for it
    _save(page, out / "sourcemap-unmapped.png", element=stack)
    page.goto(f"{base}/{path}/-/error_tracking/artifacts?release={sourcemap_demo.RELEASE}")
    _save(page, out / "artifacts.png")


def _storage(page: Page, base: str, path: str, out: Path) -> None:
    """The usage view, retention and quotas settings, and the admin's storage page."""
    page.goto(f"{base}/{path}/-/usage")
    _save(page, out / "usage.png", full_page=True)
    page.goto(f"{base}/{path}/-/settings/storage")
    _save(page, out / "storage-settings.png", full_page=True)
    page.goto(f"{base}/admin/storage")
    _save(page, out / "admin-storage.png", full_page=True)


def _save(
    page: Page, target: Path, *, full_page: bool = False, element: Locator | None = None
) -> None:
    page.wait_for_load_state("networkidle")
    if element is not None:
        element.screenshot(path=str(target))
    else:
        page.screenshot(path=str(target), full_page=full_page)
    print(f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")


if __name__ == "__main__":
    main()
