"""The usage page, storage settings (retention, a user's data, erasing a project's
data), deleting an error, audit events, and the admin's storage page."""

from __future__ import annotations

import time

import sqlalchemy as sa

from tests.inprocess import Ui, exception_event
from tests.lifecycle.helpers import DAY
from tracebox.config import Settings
from tracebox.lifecycle.cleanup import CleanupLoop
from tracebox.models import AccessLevel
from tracebox.store import Database, quotas, retention, usage
from tracebox.store.tables import errors, events


def test_usage_page_shows_stored_and_refused_and_retention(ui: Ui) -> None:
    owner = ui.user("owner")
    project = ui.project("acme/web", owner)
    ui.events(project, exception_event(), exception_event())
    reporter = ui.user("rep")
    ui.member(project, reporter, AccessLevel.REPORTER)
    ui.sign_in(reporter)

    page = ui.client.get("/acme/web/-/usage")

    assert page.status_code == 200
    assert "Stored now" in page.text and "Events kept for" in page.text
    assert "90 days (instance default)" in page.text
    assert 'href="/acme/web/-/settings/storage"' not in page.text  # a Reporter cannot change it
    assert ui.client.get("/acme/web/-/settings/storage").status_code == 403


def test_retention_form_saves_validates_and_is_audited(ui: Ui, db: Database) -> None:
    owner = ui.user("owner")
    project = ui.project("acme/web", owner)
    ui.sign_in(owner)
    page = "/acme/web/-/settings/storage"

    bad = ui.post(page + "/retention", {"max_age_days": "0", "max_events_per_error": ""}, page=page)
    assert bad.status_code == 400 and "Maximum age must be a whole number" in bad.text
    ok = ui.post(page + "/retention", {"max_age_days": "14", "max_events_per_error": ""}, page=page)
    assert ok.status_code == 303

    with db.read() as conn:
        saved = retention.get(conn, project.id)
    assert (saved.max_age_days, saved.max_events_per_error) == (14, None)
    assert "retention.update" in ui.client.get("/acme/web/-/audit_events").text


def test_deleting_an_error_from_its_page(ui: Ui, db: Database) -> None:
    owner = ui.user("owner")
    project = ui.project("acme/web", owner)
    ui.events(project, exception_event(), exception_event("KeyError", "other"))
    ui.sign_in(owner)
    with db.read() as conn:
        error_id = conn.execute(
            sa.select(errors.c.id).where(errors.c.type == "ValueError")
        ).scalar_one()
    details = ui.client.get(f"/acme/web/-/error_tracking/{error_id}")
    assert f'action="/acme/web/-/error_tracking/{error_id}/delete"' in details.text

    r = ui.post(
        f"/acme/web/-/error_tracking/{error_id}/delete",
        {},
        page=f"/acme/web/-/error_tracking/{error_id}",
    )

    assert r.status_code == 303
    assert ui.client.get(f"/acme/web/-/error_tracking/{error_id}").status_code == 404
    with db.read() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(events)).scalar_one() == 1


def test_a_users_data_and_the_projects_data_are_deleted_with_confirmation(
    ui: Ui, db: Database
) -> None:
    owner = ui.user("owner")
    project = ui.project("acme/web", owner)
    ui.events(project, exception_event(user={"email": "ann@example.com"}), exception_event())
    ui.sign_in(owner)
    page = "/acme/web/-/settings/storage"

    r = ui.post(page + "/user_deletions", {"field": "email", "value": "ANN@example.com"}, page=page)
    assert r.status_code == 303
    assert "Deleted the user&#39;s events: 1 events." in ui.client.get(page).text
    refused = ui.post(page + "/erase", {"confirm": "acme/wrong"}, page=page)
    assert refused.status_code == 400 and "Type acme/web to confirm" in refused.text
    assert ui.post(page + "/erase", {"confirm": "acme/web"}, page=page).status_code == 303
    with db.read() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(errors)).scalar_one() == 0
    trail = ui.client.get("/acme/web/-/audit_events").text
    assert "project_data.delete" in trail and "user_data.delete" in trail
    assert "ann@example.com" not in trail.lower()


def test_an_error_whose_events_expired_says_so(ui: Ui, db: Database, settings: Settings) -> None:
    owner = ui.user("owner")
    project = ui.project("acme/web", owner)
    ui.events(project, exception_event(timestamp=time.time() - 29 * DAY))
    with db.write() as conn:
        retention.put(conn, project.id, max_age_days=7, max_events_per_error=None)
    CleanupLoop(db, settings).run_once()
    ui.sign_in(owner)
    with db.read() as conn:
        error_id = conn.execute(sa.select(errors.c.id)).scalar_one()

    page = ui.client.get(f"/acme/web/-/error_tracking/{error_id}").text

    assert "Events expired" in page and 'id="events-expired"' in page


def test_admin_storage_and_audit_pages_are_for_admins(ui: Ui) -> None:
    owner = ui.user("owner")
    ui.project("acme/web", owner)
    ui.sign_in(owner)
    assert ui.client.get("/admin/storage").status_code == 403
    assert ui.client.get("/admin/audit_events").status_code == 403
    ui.sign_in(ui.user("root", admin=True))
    storage = ui.client.get("/admin/storage")
    assert storage.status_code == 200 and "Disk budget" in storage.text
    assert ui.client.get("/admin/audit_events").status_code == 200


def test_quotas_form_saves_rows_and_spike_protection(ui: Ui, db: Database) -> None:
    owner = ui.user("owner")
    project = ui.project("acme/web", owner)
    ui.sign_in(owner)
    page = "/acme/web/-/settings/storage"
    form = {
        "category_0": "error", "window_0": "60", "max_count_0": "100", "key_0": "",
        "category_1": "session", "window_1": "86400", "max_count_1": "", "key_1": "",
        "spike_enabled": "1", "spike_multiplier": "5",
    }  # fmt: skip

    assert ui.post(page + "/quotas", form, page=page).status_code == 303
    bad = ui.post(page + "/quotas", {**form, "spike_multiplier": "1"}, page=page)
    assert bad.status_code == 400 and "spike multiplier must be from 2" in bad.text

    with db.read() as conn:
        saved = quotas.get(conn, project.id)
    assert saved.quotas == (quotas.Quota("error", 60, 100),)
    assert saved.spike == quotas.SpikeProtection(True, 5.0)
    assert 'value="100"' in ui.client.get(page).text


def test_a_banner_says_when_spike_protection_refused_events(ui: Ui, db: Database) -> None:
    owner = ui.user("owner")
    project = ui.project("acme/web", owner)
    ui.sign_in(owner)
    assert 'id="spike-banner"' not in ui.client.get("/acme/web/-/error_tracking").text
    with db.write() as conn:
        hour = int(time.time() // 3600)
        usage.count_outcomes(conn, {(project.id, hour, "error", "refused", "spike_protection"): 42})

    page = ui.client.get("/acme/web/-/error_tracking").text

    assert 'id="spike-banner"' in page and "42 events were refused" in page
