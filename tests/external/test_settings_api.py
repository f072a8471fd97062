"""Linking a project to a Sentry server through the REST API and projects.json."""

from __future__ import annotations

import pytest

from tests.external.fake_sentry import TOKEN, FakeSentry
from tests.inprocess import Api
from tracebox.models import AccessLevel
from tracebox.store import projects

pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
SETTINGS = "/api/v4/projects/{id}/error_tracking/settings"


def external_body(fake: FakeSentry, token: str = TOKEN) -> dict[str, object]:
    return {
        "active": True,
        "integrated": False,
        "api_host": fake.url,
        "token": token,
        "project": {"slug": "web", "organization_slug": "acme-org"},
    }


def test_put_links_the_chosen_project_and_never_returns_the_token(
    api: Api, fake_sentry: FakeSentry
) -> None:
    owner = api.user()
    project = api.project("acme/web", owner)
    token = api.token(owner)
    r = api.call("PUT", SETTINGS.format(id=project.id), token, json=external_body(fake_sentry))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["integrated"] is False and body["project_name"] == "Web"
    assert body["api_url"] == f"{fake_sentry.url}/api/0/projects/acme-org/web/"
    assert body["sentry_external_url"] == f"{fake_sentry.url}/acme-org/web/"
    assert TOKEN not in r.text
    get = api.call("GET", SETTINGS.format(id=project.id), token)
    assert get.json() == body and TOKEN not in get.text
    with api.db.read() as conn:
        link = projects.get_external_link(conn, project.id)
    assert link is not None and link.external_project_id == "42"
    assert TOKEN not in link.encrypted_token  # encrypted at rest
    assert ("GET", "/api/0/projects/", f"Bearer {TOKEN}") in fake_sentry.requests


def test_patch_with_a_masked_token_keeps_the_stored_one(api: Api, fake_sentry: FakeSentry) -> None:
    owner = api.user()
    project = api.project("acme/web", owner)
    token = api.token(owner)
    api.call("PUT", SETTINGS.format(id=project.id), token, json=external_body(fake_sentry))
    masked = external_body(fake_sentry, token="*****")
    r = api.call("PATCH", SETTINGS.format(id=project.id), token, json=masked)
    assert r.status_code == 200, r.text
    assert fake_sentry.requests[-1][2] == f"Bearer {TOKEN}"


def test_an_unknown_project_is_refused(api: Api, fake_sentry: FakeSentry) -> None:
    owner = api.user()
    project = api.project("acme/web", owner)
    body = external_body(fake_sentry)
    body["project"] = {"slug": "gone", "organization_slug": "acme-org"}
    r = api.call("PUT", SETTINGS.format(id=project.id), api.token(owner), json=body)
    assert r.status_code == 400
    assert "is no longer available" in r.json()["message"]


def test_developers_may_not_link(api: Api, fake_sentry: FakeSentry) -> None:
    owner, dev = api.user(), api.user()
    project = api.project("acme/web", owner)
    api.member(project, dev, AccessLevel.DEVELOPER)
    r = api.call(
        "PUT", SETTINGS.format(id=project.id), api.token(dev), json=external_body(fake_sentry)
    )
    assert r.status_code == 403
