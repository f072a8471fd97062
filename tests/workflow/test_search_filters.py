"""Each search filter against errors made by the real Python SDK, through /api/v4's
``query`` (the same parser and store query serve the UI and /api/0)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest
import sentry_sdk

from tests.inprocess import Api
from tests.workflow.sdk import raise_and_capture, sdk
from tracebox.models import AccessLevel, Project

DECLINED = "ValueError: payment declined"
SKU = "KeyError: 'missing sku'"
DISK = "disk almost full"


@dataclass
class Shop:
    api: Api
    project: Project
    token: str
    bob_token: str

    def titles(self, query: str, **params: str) -> set[str]:
        url = f"/api/v4/projects/{self.project.id}/error_tracking/errors"
        r = self.api.call("GET", url, self.token, params={"query": query, **params})
        assert r.status_code == 200, r.text
        return {e["title"] for e in r.json()}

    def error_id(self, title: str) -> int:
        url = f"/api/v4/projects/{self.project.id}/error_tracking/errors"
        found = self.api.call("GET", url, self.token, params={"query": ""}).json()
        return next(e["id"] for e in found if e["title"] == title)


@pytest.fixture
def shop(api: Api) -> Shop:
    owner = api.user("owner")
    project = api.project("acme/shop", owner)
    bob = api.user("bob")
    api.member(project, bob, AccessLevel.DEVELOPER)
    alice = {"id": "u1", "email": "a@b.c", "username": "alice"}
    with sdk(release="shop@1.4.2", environment="production") as old:
        for _ in range(2):
            raise_and_capture(
                ValueError("payment declined"), tags={"browser": "Firefox"}, user=alice
            )
    api.events(project, *old.events)
    time.sleep(0.01)  # shop@1.5.0 is first seen after shop@1.4.2
    with sdk(release="shop@1.5.0", environment="staging") as new:
        raise_and_capture(
            KeyError("missing sku"),
            tags={"browser": "Chrome", "os": "Linux", "region": "eu"},
            user={"id": "u2", "email": "b@c.d", "username": "bob"},
            level="warning",
        )
        with sentry_sdk.isolation_scope() as scope:
            scope.set_tag("url", "https://shop.test/checkout?step=2")
            sentry_sdk.capture_message(DISK, level="info")
    api.events(project, *new.events)
    assert len(old.events) == 2 and len(new.events) == 2
    return Shop(api, project, api.token(owner), api.token(bob))


def test_status_level_platform_and_text(shop: Shop) -> None:
    assert shop.titles("is:unresolved") == {DISK, SKU, DECLINED}
    assert shop.titles("level:error") == {DECLINED}
    assert shop.titles("!level:error") == {DISK, SKU}
    assert shop.titles("level:warning") == {SKU}
    assert shop.titles("platform:python") == {DISK, SKU, DECLINED}
    assert shop.titles("platform:java") == set()
    assert shop.titles("declined") == {DECLINED}
    assert shop.titles('"missing sku"') == {SKU}
    assert shop.titles("DISK almost") == {DISK}  # words, case-insensitive
    assert shop.titles("pay*clined") == {DECLINED}


def test_times_seen_and_seen_times(shop: Shop) -> None:
    assert shop.titles("times-seen:>1") == {DECLINED}
    assert shop.titles("times-seen:1") == {DISK, SKU}
    assert shop.titles("timesSeen:<=2") == {DISK, SKU, DECLINED}
    assert shop.titles("first-seen:-1h") == {DISK, SKU, DECLINED}
    assert shop.titles("first-seen:+1h") == set()
    assert shop.titles("last-seen:>2000-01-01") == {DISK, SKU, DECLINED}
    assert shop.titles("last-seen:<2000-01-01T00:00:00Z") == set()


def test_release_and_environment(shop: Shop) -> None:
    assert shop.titles("release:shop@1.4.2") == {DECLINED}
    assert shop.titles("release:latest") == {DISK, SKU}
    assert shop.titles("release:shop@1.*") == {DISK, SKU, DECLINED}
    assert shop.titles("environment:staging") == {DISK, SKU}
    assert shop.titles("!environment:staging") == {DECLINED}
    assert shop.titles("", environment="production") == {DECLINED}


def test_assignment_filters(shop: Shop) -> None:
    declined = shop.error_id(DECLINED)
    url = f"/api/v4/projects/{shop.project.id}/error_tracking/errors/{declined}"
    bob_id = shop.api.call("GET", "/api/v4/user", shop.bob_token).json()["id"]
    r = shop.api.call("PUT", url, shop.token, json={"assignee_id": bob_id})
    assert r.status_code == 200 and r.json()["assignee"]["username"] == "bob", r.text
    assert shop.titles("is:assigned") == {DECLINED}
    assert shop.titles("is:unassigned") == {DISK, SKU}
    assert shop.titles("assigned:bob") == {DECLINED}
    assert shop.titles("assigned:me") == set()  # the owner asks
    mine = shop.api.call(
        "GET",
        f"/api/v4/projects/{shop.project.id}/error_tracking/errors",
        shop.bob_token,
        params={"query": "assigned:me"},
    )
    assert [e["title"] for e in mine.json()] == [DECLINED]
    assert shop.titles("!assigned:me") == {DISK, SKU, DECLINED}


def test_review_regressed_and_statuses(shop: Shop) -> None:
    assert shop.titles("is:for_review") == {DISK, SKU, DECLINED}  # new errors
    sku = shop.error_id(SKU)
    url = f"/api/v4/projects/{shop.project.id}/error_tracking/errors/{sku}"
    assert shop.api.call("PUT", url, shop.token, json={"reviewed": True}).status_code == 200
    assert shop.titles("is:for_review") == {DISK, DECLINED}
    shop.api.call("PUT", url, shop.token, json={"status": "resolved"})
    assert shop.titles("is:resolved") == {SKU}
    assert shop.titles("is:unresolved") == {DISK, DECLINED}
    with sdk(release="shop@1.5.0", environment="staging") as again:
        raise_and_capture(KeyError("missing sku"), level="warning")
    shop.api.events(shop.project, *again.events)
    assert shop.titles("is:regressed") == {SKU}
    assert shop.titles("is:for_review") == {DISK, SKU, DECLINED}  # regressed: back in review


def test_a_bad_query_is_a_400_with_the_position(shop: Shop) -> None:
    url = f"/api/v4/projects/{shop.project.id}/error_tracking/errors"
    r = shop.api.call("GET", url, shop.token, params={"query": "is:unresolved level:"})
    assert r.status_code == 400
    assert r.json() == {"error": "query is invalid at position 21: a value after level:"}
    r = shop.api.call("GET", url, shop.token, params={"query": "x", "status": "all"})
    assert r.json() == {"error": "query cannot be combined with status or search"}


def test_tags_and_users(shop: Shop) -> None:
    assert shop.titles("browser:Firefox") == {DECLINED}
    assert shop.titles("!browser:Firefox") == {DISK, SKU}
    assert shop.titles("os:Linux") == {SKU}
    assert shop.titles("region:eu") == {SKU}  # a custom tag
    assert shop.titles("url:*checkout*") == {DISK}
    assert shop.titles('url:"https://shop.test/checkout?step=2"') == {DISK}
    assert shop.titles("user.id:u1") == {DECLINED}
    assert shop.titles("user.email:b@c.d") == {SKU}
    assert shop.titles("user.username:alice") == {DECLINED}
    assert shop.titles("user.email:nobody@example.com") == set()
    combined = "is:unresolved level:warning release:shop@1.5.0 browser:Chrome os:Linux"
    assert shop.titles(combined) == {SKU}


def test_environment_counts_on_details(shop: Shop) -> None:
    url = f"/api/v4/projects/{shop.project.id}/error_tracking/errors/{shop.error_id(DECLINED)}"
    details = shop.api.call("GET", url, shop.token).json()
    assert details["environments"] == [{"value": "production", "count": 2}]
