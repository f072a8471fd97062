"""The privacy settings through the REST API and the UI page (Maintainer+), and the
details page's marks for scrubbed values."""

from __future__ import annotations

import html
import re
import time

import orjson

from tests.inprocess import Api, Ui
from tests.privacy import secrets as s
from tracebox.digest.config import ConfigCache
from tracebox.digest.prepare import Preparer, read_records
from tracebox.models import AccessLevel
from tracebox.privacy import IpMode, PrivacySettings
from tracebox.spool.record import RecordKind, SpoolRecord
from tracebox.store import digest as store_digest
from tracebox.store import privacy as privacy_store
from tracebox.store.payloads import decode

PRIVACY = "/api/v4/projects/{}/error_tracking/privacy"


def test_api_reads_defaults_and_changes_given_attributes(api: Api) -> None:
    owner = api.user("owner")
    project = api.project("acme/web", owner)
    token = api.token(owner)
    url = PRIVACY.format(project.id)
    assert api.call("GET", url, token).json() == {
        "scrub_data": True,
        "sensitive_fields": [],
        "safe_fields": [],
        "ip_mode": "store",
        "drop_user_ip": False,
    }
    r = api.call(
        "PUT", url, token, json={"safe_fields": ["trace_id", "Trace-Id"], "ip_mode": "anonymize"}
    )
    assert r.status_code == 200
    assert r.json()["safe_fields"] == ["trace_id"]
    r = api.call("PUT", url, token, json={"sensitive_fields": ["order_ref"]})
    assert r.json() == {
        "scrub_data": True,
        "sensitive_fields": ["order_ref"],
        "safe_fields": ["trace_id"],
        "ip_mode": "anonymize",
        "drop_user_ip": False,
    }
    with api.db.read() as conn:
        assert privacy_store.get(conn, project.id) == PrivacySettings(
            sensitive_fields=("order_ref",), safe_fields=("trace_id",), ip_mode=IpMode.ANONYMIZE
        )


def test_api_refuses_bad_settings(api: Api) -> None:
    owner = api.user("owner")
    project = api.project("acme/web", owner)
    token = api.token(owner)
    url = PRIVACY.format(project.id)
    for body in (
        {"ip_mode": "hash"},
        {"safe_fields": ["x" * 101]},
        {"safe_fields": [f"f{i}" for i in range(101)]},
        {"sensitive_fields": ["-"]},
        {"scrub_data": "maybe"},
    ):
        r = api.call("PUT", url, token, json=body)
        assert r.status_code == 400, body
    assert (
        api.call("PUT", url, token, json={"safe_fields": [f"f{i}" for i in range(100)]}).status_code
        == 200
    )


def test_settings_change_what_the_digest_stores(api: Api) -> None:
    owner = api.user("owner")
    project = api.project("acme/web", owner)
    token = api.token(owner)
    api.call(
        "PUT",
        PRIVACY.format(project.id),
        token,
        json={"sensitive_fields": ["order_ref"]},
    )
    cache = ConfigCache()
    with api.db.read() as conn:
        assert cache.load(conn, [project.id])[project.id].privacy.sensitive_fields == ("order_ref",)
    api.call("PUT", PRIVACY.format(project.id), token, json={"safe_fields": ["debug_token"]})
    with api.db.read() as conn:  # the change bumped the project's config: reloaded
        configs = cache.load(conn, [project.id])
    assert configs[project.id].privacy.safe_fields == ("debug_token",)
    extra = {"debug_token": "keep-me-1", "order_ref": "hide-me-2", "password": "hide-me-3"}
    raw = orjson.dumps({"message": "x", "extra": extra})
    record = SpoolRecord(RecordKind.EVENT, project.id, 1, time.time(), raw).encode()
    batch = Preparer().prepare(read_records([record]), configs)
    stored = decode(batch.events[0].payload)
    assert stored["extra"] == {
        "debug_token": "keep-me-1",
        "order_ref": "[Filtered]",
        "password": "[Filtered]",
    }


def test_ui_settings_page_saves_and_explains_errors(ui: Ui) -> None:
    owner = ui.user("owner")
    project = ui.project("acme/web", owner)
    ui.sign_in(owner)
    page = "/acme/web/-/settings/privacy"
    body = ui.client.get(page).text
    assert (
        "Privacy settings" in body and 'name="scrub_data" type="checkbox" value="1" checked' in body
    )
    r = ui.post(
        page,
        {
            "scrub_data": "1",
            "sensitive_fields": "order_ref, customer_note",
            "safe_fields": "trace_id",
            "ip_mode": "drop",
            "drop_user_ip": "1",
        },
        page=page,
    )
    assert r.status_code == 303
    with ui.db.read() as conn:
        assert privacy_store.get(conn, project.id) == PrivacySettings(
            sensitive_fields=("order_ref", "customer_note"),
            safe_fields=("trace_id",),
            ip_mode=IpMode.DROP,
            drop_user_ip=True,
        )
    r = ui.post(page, {"sensitive_fields": "x", "ip_mode": "store"}, page=page)
    assert r.status_code == 400
    assert "is not a field name" in html.unescape(r.text)
    assert 'value="store" checked' not in r.text or "x</textarea>" in r.text


def test_ui_settings_page_is_for_maintainers(ui: Ui) -> None:
    owner = ui.user("owner")
    project = ui.project("acme/web", owner)
    dev = ui.user("dev")
    ui.member(project, dev, AccessLevel.DEVELOPER)
    ui.sign_in(dev)
    assert ui.client.get("/acme/web/-/settings/privacy").status_code == 403


def test_details_page_marks_every_scrubbed_value_and_names_the_rule(ui: Ui) -> None:
    owner = ui.user("owner")
    project = ui.project("acme/web", owner)
    _digest(ui, project.id, s.raw_event())
    ui.sign_in(owner)
    listing = ui.client.get("/acme/web/-/error_tracking").text
    error_id = re.search(r"/acme/web/-/error_tracking/(\d+)", listing).group(1)  # type: ignore[union-attr]
    body = ui.client.get(f"/acme/web/-/error_tracking/{error_id}").text
    assert [secret for secret in s.ALL if secret in html.unescape(body)] == []
    marks = re.findall(
        r'<mark class="scrubbed" tabindex="0" data-rules="([^"]+)" title="([^"]+)">', body
    )
    assert len(marks) >= 10
    rules = {r for found, _ in marks for r in found.split()}
    assert {"sensitive-key", "credit-card", "bearer-token"} <= rules
    assert "unknown" not in rules  # every marker names the rule that filtered it
    assert 'id="privacy"' in body and "Safe fields (Settings &gt; Privacy)" in body


def _digest(domain: Ui, project_id: int, raw: dict[str, object]) -> None:
    """Through the digest's preparation as the worker runs it: spool record in, rows out."""
    record = SpoolRecord(
        RecordKind.EVENT, project_id, 1, time.time(), orjson.dumps(raw), client_ip="192.0.2.1"
    )
    with domain.db.read() as conn:
        configs = ConfigCache().load(conn, [project_id])
    batch = Preparer().prepare(read_records([record.encode()]), configs)
    assert batch.events and not batch.invalid
    with domain.db.write() as conn:
        store_digest.write_events(conn, batch.events)
