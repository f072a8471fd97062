"""Sign-in, session cookies, CSRF, throttling and security headers, in-process."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from tests.inprocess import PASSWORD, Ui
from tracebox.accounts import users
from tracebox.app import create_app
from tracebox.store import accounts
from tracebox.ui.links import safe_next
from tracebox.ui.sessions import COOKIE_NAME


def test_sign_in_sets_a_strict_session_cookie(ui: Ui) -> None:
    alice = ui.user("alice")
    r = ui.sign_in(alice)
    assert (r.status_code, r.headers["location"]) == (303, "/projects")
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE_NAME}=")
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Secure" not in cookie
    page = ui.client.get("/projects")
    assert page.status_code == 200 and "alice" in page.text


def test_cookie_is_secure_behind_https(ui: Ui) -> None:
    with TestClient(create_app(ui.settings), base_url="https://tracebox.example") as client:
        r = client.get("/users/sign_in")
    assert "Secure" in r.headers["set-cookie"]


def test_sign_out_ends_the_session(ui: Ui) -> None:
    ui.sign_in(ui.user("bob"))
    r = ui.post("/users/sign_out", {})
    assert r.headers["location"] == "/users/sign_in"
    after = ui.client.get("/projects", follow_redirects=False)
    assert after.status_code == 303 and after.headers["location"].startswith("/users/sign_in")


def test_anonymous_pages_redirect_to_sign_in_with_next(ui: Ui) -> None:
    r = ui.client.get("/acme/web/-/error_tracking?status=all", follow_redirects=False)
    assert r.status_code == 303
    assert r.headers["location"] == "/users/sign_in?next=/acme/web/-/error_tracking%3Fstatus%3Dall"


def test_sign_in_goes_back_to_next_but_never_off_site(ui: Ui) -> None:
    carol = ui.user("carol")
    ok = ui.post(
        "/users/sign_in",
        {
            "username": "carol",
            "password": PASSWORD,
            "next": "/-/user_settings/personal_access_tokens",
        },
        page="/users/sign_in",
    )
    assert ok.headers["location"] == "/-/user_settings/personal_access_tokens"
    assert carol.username == "carol"
    for target in ("//evil.example", "https://evil.example", "/\\evil.example", "javascript:x"):
        assert safe_next(target, "/projects") == "/projects"


def test_wrong_password_and_blocked_user_are_refused_alike(ui: Ui) -> None:
    dave = ui.user("dave")
    wrong = ui.sign_in(dave, "not the password")
    assert wrong.status_code == 401 and "Invalid username or password." in wrong.text
    with ui.db.write() as conn:
        accounts.set_blocked(conn, dave.id, True)
    blocked = ui.sign_in(dave)
    assert blocked.status_code == 401 and "Invalid username or password." in blocked.text


def test_changing_the_password_or_blocking_ends_sessions(ui: Ui) -> None:
    erin = ui.user("erin")
    ui.sign_in(erin)
    assert ui.client.get("/projects").status_code == 200
    with ui.db.write() as conn:
        users.set_password(conn, "erin", "a brand new password")
    assert ui.client.get("/projects", follow_redirects=False).status_code == 303


def test_repeated_failed_sign_ins_are_throttled(ui: Ui) -> None:
    frank = ui.user("frank")
    for _ in range(ui.settings.signin_max_failures):
        assert ui.sign_in(frank, "guess").status_code == 401
    locked = ui.sign_in(frank)  # even the right password waits now
    assert locked.status_code == 429
    assert "Too many failed sign-in attempts" in locked.text


def test_forms_without_a_valid_csrf_token_are_refused(ui: Ui) -> None:
    grace = ui.user("grace")
    ui.sign_in(grace)
    project = ui.project("acme/web", grace)
    r = ui.client.post("/projects/new", data={"name": "x"}, follow_redirects=False)
    assert r.status_code == 403 and "The form has expired" in r.text
    r = ui.client.post(
        "/projects/new", data={"name": "x", "_csrf": "0" * 64}, follow_redirects=False
    )
    assert r.status_code == 403
    # A token from another session does not work either.
    other = TestClient(create_app(ui.settings))
    foreign = re.search(r'name="_csrf" value="([^"]+)"', other.get("/users/sign_in").text)
    assert foreign
    r = ui.client.post(
        f"/{project.path}/-/settings/monitor/client_keys",
        data={"_csrf": foreign.group(1)},
        follow_redirects=False,
    )
    assert r.status_code == 403


def test_every_page_carries_the_security_headers(ui: Ui) -> None:
    ui.sign_in(ui.user("heidi", admin=True))
    for path in ("/users/sign_in", "/projects", "/admin/users", "/nowhere/-/error_tracking"):
        r = ui.client.get(path)
        csp = r.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp
        assert "'unsafe-inline'" not in csp
        assert r.headers["x-frame-options"] == "DENY"
        assert r.headers["x-content-type-options"] == "nosniff"
        assert "<script>" not in r.text  # scripts only as files
        assert not re.search(r"<script(?![^>]*\bsrc=)", r.text)
        assert " style=" not in r.text  # no inline styles either


def test_static_files_are_versioned_and_cached(ui: Ui) -> None:
    page = ui.client.get("/users/sign_in").text
    css = re.search(r'href="(/-/static/app\.css\?v=[0-9a-f]{12})"', page)
    htmx = re.search(r'src="(/-/static/htmx\.min\.js\?v=[0-9a-f]{12})"', page)
    assert css and htmx
    r = ui.client.get(css.group(1))
    assert r.status_code == 200 and "immutable" in r.headers["cache-control"]
    assert r.headers["content-type"].startswith("text/css")
    assert ui.client.get("/-/static/app.css").headers["cache-control"] == "no-cache"
    for name in ("nope.js", "README.md"):  # only the served kinds of the static folder
        assert ui.client.get(f"/-/static/{name}", follow_redirects=False).status_code == 404
    traversal = ui.client.get("/-/static/..%2Fweb.py", follow_redirects=False)
    assert traversal.status_code != 200 and "import" not in traversal.text
    assert "htmx" in ui.client.get(htmx.group(1)).text[:200]
