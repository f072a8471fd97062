"""One error shape per surface (ARCHITECTURE contract 7), locked for every status a
client meets: 400, 401, 403, 404, 413, 429, 500 and 503.

Each surface is driven through the whole app in-process. The error is raised from inside
the surface's own request path (a function every request of that surface calls), so the
same boundary that renders a real failure renders it here; a plain ``RuntimeError``
stands for any unexpected failure (500). A few real triggers follow.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.inprocess import Api, Ui, api_client, ui_client
from tracebox import errors
from tracebox.config import Settings
from tracebox.store import Database

STATUSES = [400, 401, 403, 404, 413, 429, 500, 503]
RETRY_AFTER = 17


def raised(status: int) -> Exception:
    if status == 500:
        return RuntimeError("a bug: this text must not reach the client")
    kinds: dict[int, Any] = {
        400: errors.BadRequest("bad input"),
        401: errors.Unauthorized(""),
        403: errors.Forbidden("not for you"),
        404: errors.NotFound("Thing"),
        413: errors.PayloadTooLarge("too big"),
        429: errors.RateLimited("slow down", RETRY_AFTER),
        503: errors.Unavailable("busy", RETRY_AFTER),
    }
    return kinds[status]


def raising(status: int) -> Any:
    def fail(*_: Any, **__: Any) -> Any:
        raise raised(status)

    return fail


@pytest.fixture
def database_url() -> str:
    return ""  # the shapes do not depend on the database: SQLite only


@pytest.fixture
def api(settings: Settings, db: Database) -> Iterator[Api]:
    yield from api_client(settings, db, raise_server_exceptions=False)


@pytest.fixture
def ui(settings: Settings, db: Database) -> Iterator[Ui]:
    yield from ui_client(settings, db, raise_server_exceptions=False)


@pytest.mark.parametrize("status", STATUSES)
def test_ingest_shape(api: Api, monkeypatch: pytest.MonkeyPatch, status: int) -> None:
    monkeypatch.setattr("tracebox.ingest.routes._project_id", raising(status))
    r = api.client.post(
        "/api/1/envelope/", content=b"{}\n", headers={"Origin": "https://a.example"}
    )
    assert r.status_code == status
    assert r.headers["content-type"] == "application/json"
    detail = r.json()["detail"]
    assert isinstance(detail, str) and detail and set(r.json()) == {"detail"}
    assert r.headers["x-sentry-error"] == detail[:200]
    assert r.headers["access-control-allow-origin"] == "*"  # a browser SDK can read it
    assert "x-sentry-error" in r.headers["access-control-expose-headers"]
    assert ("retry-after" in r.headers) == (status in (429, 503))
    if status in (429, 503):
        assert r.headers["retry-after"] == str(RETRY_AFTER)
    if status == 500:
        assert "bug" not in r.text


@pytest.mark.parametrize("status", STATUSES)
def test_rest_v4_shape(api: Api, monkeypatch: pytest.MonkeyPatch, status: int) -> None:
    monkeypatch.setattr("tracebox.accounts.auth.authenticate", raising(status))
    r = api.call("GET", "/api/v4/projects", "any-token")
    assert r.status_code == status
    assert r.headers["content-type"] == "application/json"
    body = r.json()
    assert set(body) <= {"message", "error", "error_description", "scope"} and body
    text = body.get("message") or body.get("error")
    assert isinstance(text, str) and text
    if "message" in body:
        assert body["message"].startswith(str(status)), body  # GitLab: "404 Thing Not Found"
    assert ("retry-after" in r.headers) == (status in (429, 503))
    if status == 500:
        assert "bug" not in r.text


@pytest.mark.parametrize("status", STATUSES)
def test_sentry_api_shape(api: Api, monkeypatch: pytest.MonkeyPatch, status: int) -> None:
    monkeypatch.setattr("tracebox.accounts.auth.authenticate", raising(status))
    r = api.call("GET", "/api/0/projects/", headers={"Authorization": "Bearer any"})
    assert r.status_code == status
    assert r.headers["content-type"] == "application/json"
    assert set(r.json()) == {"detail"} and r.json()["detail"]
    assert ("retry-after" in r.headers) == (status in (429, 503))
    if status == 500:
        assert "bug" not in r.text


@pytest.mark.parametrize("status", STATUSES)
def test_ui_shape(ui: Ui, monkeypatch: pytest.MonkeyPatch, status: int) -> None:
    monkeypatch.setattr("tracebox.ui.web.current_user", raising(status))
    r = ui.client.get("/projects", follow_redirects=False)
    if status == 401:  # the UI's answer to "not signed in": the sign-in page
        assert r.status_code == 303
        assert r.headers["location"] == "/users/sign_in?next=/projects"
        return
    assert r.status_code == status
    assert r.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in r.headers["content-security-policy"]
    assert r.headers["x-frame-options"] == "DENY"
    title = r.text.split("<title>", 1)[1].split("</title>", 1)[0]
    assert title.split(" · ")[0] not in ("Error", "Tracebox"), title  # each status has its own
    assert f'<p class="status-code">{status}</p>' in r.text
    assert ("retry-after" in r.headers) == (status in (429, 503))
    if status == 500:
        assert "bug" not in r.text


def test_ui_titles_differ_per_status(ui: Ui, monkeypatch: pytest.MonkeyPatch) -> None:
    titles = set()
    for status in (400, 403, 404, 413, 429, 500, 503):
        monkeypatch.setattr("tracebox.ui.web.current_user", raising(status))
        titles.add(ui.client.get("/projects").text.split("<title>", 1)[1].split("<", 1)[0])
    assert len(titles) == 7


# --- real triggers -----------------------------------------------------------------------


def test_real_ingest_errors(api: Api) -> None:
    bad_id = api.client.post("/api/x1/store/", content=b"{}")
    assert bad_id.status_code == 400 and bad_id.json()["detail"].startswith("invalid project id")
    no_auth = api.client.post("/api/1/store/", content=b"{}")
    assert no_auth.status_code == 401 and no_auth.headers["x-sentry-error"]
    pixel = api.client.get("/api/1/store/?sentry_data=%7B%7D")  # old JavaScript clients' GET
    assert pixel.status_code == 405
    assert "POST" in pixel.json()["detail"] and "POST" in pixel.headers["allow"]
    assert pixel.headers["access-control-allow-origin"] == "*"


def test_real_api_and_ui_errors(api: Api, ui: Ui) -> None:
    assert api.call("GET", "/api/v4/projects").json() == {"message": "401 Unauthorized"}
    token = api.token(api.user())
    missing = api.call("GET", "/api/v4/projects/999", token)
    assert missing.status_code == 404 and missing.json() == {"message": "404 Project Not Found"}
    nowhere = api.call("GET", "/api/v4/no/such/route", token)
    assert nowhere.status_code == 404 and nowhere.json() == {"message": "404 Not Found"}
    unknown = ui.client.post("/no/such/page/-/x", follow_redirects=False)
    assert unknown.status_code in (403, 404, 405)  # CSRF first, else not found / not allowed
    assert unknown.headers["content-type"].startswith("text/html")
    static = ui.client.get("/-/static/missing.css")
    assert static.status_code == 404 and "Page not found" in static.text
