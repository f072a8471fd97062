"""projects.json (the Connect button): projects, and every error case's message."""

from __future__ import annotations

import pytest

from tests.external.conftest import READ_TIMEOUT_S
from tests.external.fake_sentry import TOKEN, FakeSentry
from tests.helpers import free_port
from tests.inprocess import Ui
from tracebox.store import projects

pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
URL = "/acme/web/-/error_tracking/projects.json"


def signed_in_owner(ui: Ui, *, monitor: bool = True) -> None:
    owner = ui.user("owner")
    project = ui.project("acme/web", owner)
    if not monitor:
        with ui.db.write() as conn:
            projects.update(conn, project.id, name=None, monitor_access_level="disabled")
    ui.sign_in(owner)


def connect(ui: Ui, api_host: str, token: str = TOKEN, *, monitor: bool = True) -> object:
    signed_in_owner(ui, monitor=monitor)
    return ui.client.get(URL, params={"api_host": api_host, "token": token})


def test_lists_the_projects_the_token_can_read(ui: Ui, fake_sentry: FakeSentry) -> None:
    r = connect(ui, fake_sentry.url)
    assert r.status_code == 200  # type: ignore[attr-defined]
    assert r.json()["projects"][0] == {  # type: ignore[attr-defined]
        "id": "42",
        "name": "Web",
        "slug": "web",
        "status": "active",
        "organization_name": "Acme Org",
        "organization_id": "7",
        "organization_slug": "acme-org",
    }


def test_404_when_the_monitor_feature_is_disabled(ui: Ui, fake_sentry: FakeSentry) -> None:
    r = connect(ui, fake_sentry.url, monitor=False)
    assert r.status_code == 404  # type: ignore[attr-defined]
    assert fake_sentry.requests == []


@pytest.mark.parametrize(
    ("suffix", "token", "message"),
    [
        (
            "",
            "bad",
            "Sentry refused the auth token (HTTP 401). Check the token and that it has "
            "the scopes project:read, event:read and event:write",
        ),
        ("", "noscope", "Sentry refused the auth token (HTTP 403)"),
        ("/e404", TOKEN, "Sentry response status code: 404"),
        ("/e500", TOKEN, "Sentry response status code: 500"),
        ("/big", TOKEN, "Sentry API response is too big. Limit is 1048576 bytes"),
        ("/html", TOKEN, "Sentry returned a response that is not JSON"),
        ("/redirect", TOKEN, "redirects are not followed"),
        ("/slow", TOKEN, f"did not answer within {READ_TIMEOUT_S:g} seconds"),
    ],
)
def test_sentry_errors_give_a_message_that_names_the_cause(
    ui: Ui, fake_sentry: FakeSentry, suffix: str, token: str, message: str
) -> None:
    # For /slow the message itself proves the read timeout cut the request short: the
    # fake answers valid JSON after SLOW_SECONDS, which would not name a timeout.
    r = connect(ui, fake_sentry.url + suffix, token)
    assert r.status_code == 400  # type: ignore[attr-defined]
    assert message in r.json()["message"]  # type: ignore[attr-defined]


def test_connection_refused(ui: Ui) -> None:
    r = connect(ui, f"http://127.0.0.1:{free_port()}")
    assert r.status_code == 400  # type: ignore[attr-defined]
    assert "Connection to Sentry at 127.0.0.1 failed" in r.json()["message"]  # type: ignore[attr-defined]


def test_dns_failure(ui: Ui) -> None:
    r = connect(ui, "https://sentry.invalid")
    assert r.status_code == 400  # type: ignore[attr-defined]
    assert "Could not resolve the Sentry host 'sentry.invalid'" in r.json()["message"]  # type: ignore[attr-defined]


def test_bad_input_is_a_400_not_a_500(ui: Ui) -> None:
    r = connect(ui, "ftp://sentry.example")
    assert r.status_code == 400  # type: ignore[attr-defined]
