"""The stored Sentry auth token: encrypted at rest, shown by no page, API response or log."""

from __future__ import annotations

import logging

import pytest
import sqlalchemy as sa

from tests.external.fake_sentry import TOKEN, FakeSentry
from tests.external.test_external_errors import linked
from tests.inprocess import Ui
from tracebox.store.tables import error_tracking_settings
from tracebox.tracking.crypto import TokenCipher

SQLITE = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


@SQLITE
def test_no_page_response_or_log_line_shows_the_stored_token(
    ui: Ui, fake_sentry: FakeSentry, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    project, owner, api_token = linked(ui, fake_sentry)
    ui.sign_in(owner)
    base = "/acme/web/-/error_tracking"
    texts = []
    for path in [
        "/acme/web/-/settings/monitor",
        base,
        base + "?status=all&sort=frequency&search=fake",
        base + "/1001",
        base + "/projects.json?api_host=" + fake_sentry.url + "&token=*****",
        base + "/projects.json?api_host=" + fake_sentry.url + "/e500&token=*****",
        base + "/99999",
    ]:
        r = ui.client.get(path)
        texts += [r.text, str(r.headers)]
    assert '"slug":"web"' in texts[8]  # the masked token worked
    rest = f"/api/v4/projects/{project.id}/error_tracking"
    headers = {"PRIVATE-TOKEN": api_token}
    for method, path in [("GET", "/settings"), ("GET", "/errors"), ("GET", "/errors/1001")]:
        r = ui.client.request(method, rest + path, headers=headers)
        texts += [r.text, str(r.headers)]
    fake_sentry.issues["1001"]["id"] = "broken"  # an invalid answer is reported, not echoed
    r = ui.client.get(rest + "/errors?per_page=5&search=x", headers=headers)
    texts.append(r.text)
    with ui.db.read() as conn:
        stored = conn.execute(sa.select(error_tracking_settings.c.encrypted_token)).scalar_one()
    texts.append(stored)  # encrypted at rest
    texts += [record.getMessage() for record in caplog.records]
    texts.append(caplog.text)
    assert all(TOKEN not in text for text in texts)
    assert "•" in texts[0]  # the settings page shows the token masked


@SQLITE
def test_a_masked_token_for_another_host_is_refused(ui: Ui, fake_sentry: FakeSentry) -> None:
    _, owner, _ = linked(ui, fake_sentry)
    ui.sign_in(owner)
    r = ui.client.get(
        "/acme/web/-/error_tracking/projects.json",
        params={"api_host": "http://127.0.0.2:1", "token": "*****"},
    )
    assert r.status_code == 400 and "token is missing" in r.text
    assert all(host != "127.0.0.2" for _, host, _ in fake_sentry.requests)


def test_a_changed_secret_key_asks_for_the_token_again() -> None:
    encrypted = TokenCipher(b"first secret").encrypt(TOKEN)
    assert TokenCipher(b"first secret").decrypt(encrypted) == TOKEN
    with pytest.raises(Exception, match="cannot be decrypted"):
        TokenCipher(b"second secret").decrypt(encrypted)
    assert "<hidden>" in repr(TokenCipher(b"s"))
