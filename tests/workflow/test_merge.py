"""Merge and unmerge: events move, counts add up (and split back), future events of
either fingerprint go to the right error, even through a digest's cached lookups."""

from __future__ import annotations

import time
from typing import Any

import pytest
from sqlalchemy import select

from tests.inprocess import Api, exception_event
from tracebox.digest.prepare import Preparer
from tracebox.models import AccessLevel, Project
from tracebox.protocol.event import normalize_event
from tracebox.store import digest as store_digest
from tracebox.store.error_hashes import ErrorIdCache
from tracebox.store.tables import errors


class Digest:
    """One digest process: its cache of hash -> error id lives across batches."""

    def __init__(self, api: Api, project: Project) -> None:
        self.api, self.project, self.cache = api, project, ErrorIdCache()

    def send(self, type_: str, user: str, **extra: Any) -> None:
        raw = exception_event(type_, "v", user={"id": user}, timestamp=time.time(), **extra)
        event = normalize_event(raw, received_at=time.time(), client_ip="192.0.2.1")
        prepared = Preparer().prepare_event(self.project.id, event)
        with self.api.db.write() as conn:
            store_digest.write_events(conn, [prepared], self.cache)


@pytest.fixture
def setup(api: Api) -> tuple[Api, Project, str, Digest, dict[str, int]]:
    owner = api.user("owner")
    project = api.project("acme/web", owner)
    digest = Digest(api, project)
    for user in ("u1", "u2", "u2"):
        digest.send("Alpha", user)
    for user in ("u2", "u3"):
        digest.send("Beta", user, tags={"browser": "Chrome"})
    digest.send("Gamma", "u9")
    token = api.token(owner)
    found = api.call("GET", f"/api/v4/projects/{project.id}/error_tracking/errors", token).json()
    ids = {e["type"]: e["id"] for e in found}
    return api, project, token, digest, ids


def errors_url(project: Project, suffix: str = "") -> str:
    return f"/api/v4/projects/{project.id}/error_tracking/errors{suffix}"


def test_merge_then_unmerge(setup: tuple[Api, Project, str, Digest, dict[str, int]]) -> None:
    api, project, token, digest, ids = setup
    alpha, beta = ids["Alpha"], ids["Beta"]
    r = api.call("POST", errors_url(project, "/merge"), token, json={"ids": [beta, alpha]})
    assert r.status_code == 200, r.text
    merged = r.json()
    assert (merged["id"], merged["events_count"], merged["users_count"]) == (alpha, 5, 3)
    assert sum(b["count"] for b in merged["frequency"]) == 5
    details = api.call("GET", errors_url(project, f"/{beta}"), token).json()
    assert details["id"] == alpha  # the merged error's id still answers
    assert len(details["grouping_hashes"]) == 2
    browsers = {t["key"]: t for t in details["tags"]}["browser"]
    assert {v["value"]: v["count"] for v in browsers["top_values"]} == {"Firefox": 3, "Chrome": 2}
    kinds = [
        a["type"] for a in api.call("GET", errors_url(project, f"/{alpha}/activity"), token).json()
    ]
    assert kinds[-1] == "merge"

    digest.send("Beta", "u4")  # the digest's cache knew Beta's hash: the epoch moved
    after = api.call("GET", errors_url(project, f"/{alpha}"), token).json()
    assert (after["events_count"], after["users_count"]) == (6, 4)

    beta_hash = next(h for h in details["grouping_hashes"] if h != _own_hash(api, alpha))
    r = api.call(
        "POST", errors_url(project, f"/{alpha}/unmerge"), token, json={"grouping_hash": beta_hash}
    )
    assert r.status_code == 201, r.text
    split = r.json()
    assert (split["type"], split["events_count"], split["users_count"]) == ("Beta", 3, 3)
    back = api.call("GET", errors_url(project, f"/{alpha}"), token).json()
    assert (back["events_count"], back["users_count"], back["grouping_hashes"]) == (
        3,
        2,
        [_own_hash(api, alpha)],
    )
    assert sum(b["count"] for b in back["frequency"]) == 3
    assert {t["key"]: t for t in back["tags"]}["browser"]["top_values"] == [
        {"value": "Firefox", "count": 3}
    ]
    digest.send("Beta", "u5")  # future events of the fingerprint go to the new error
    new = api.call("GET", errors_url(project, f"/{split['id']}"), token).json()
    assert new["events_count"] == 4
    kinds = [
        a["type"]
        for a in api.call("GET", errors_url(project, f"/{split['id']}/activity"), token).json()
    ]
    assert kinds == ["unmerge"]


def _own_hash(api: Api, error_id: int) -> str:
    with api.db.read() as conn:
        return str(
            conn.execute(select(errors.c.grouping_hash).where(errors.c.id == error_id)).scalar_one()
        )


def test_merge_and_unmerge_refusals(
    setup: tuple[Api, Project, str, Digest, dict[str, int]],
) -> None:
    api, project, token, _, ids = setup
    r = api.call("POST", errors_url(project, "/merge"), token, json={"ids": [ids["Alpha"]]})
    assert r.status_code == 400
    r = api.call("POST", errors_url(project, "/merge"), token, json={"ids": [ids["Alpha"], 10**9]})
    assert r.status_code == 404
    own = _own_hash(api, ids["Alpha"])
    r = api.call(
        "POST", errors_url(project, f"/{ids['Alpha']}/unmerge"), token, json={"grouping_hash": own}
    )
    assert r.json() == {"error": "grouping_hash: an error keeps its own fingerprint"}
    r = api.call(
        "POST",
        errors_url(project, f"/{ids['Alpha']}/unmerge"),
        token,
        json={"grouping_hash": "0" * 32},
    )
    assert r.status_code == 404
    reporter = api.user("reporter")
    api.member(project, reporter, AccessLevel.REPORTER)
    r = api.call(
        "POST",
        errors_url(project, "/merge"),
        api.token(reporter),
        json={"ids": [ids["Alpha"], ids["Beta"]]},
    )
    assert r.status_code == 403


def test_sentry_merge(setup: tuple[Api, Project, str, Digest, dict[str, int]]) -> None:
    api, _, token, _, ids = setup
    params = [("id", str(ids["Gamma"])), ("id", str(ids["Alpha"]))]
    r = api.call("PUT", "/api/0/projects/acme/web/issues/", token, params=params, json={"merge": 1})
    assert r.json() == {"merge": {"parent": str(ids["Alpha"]), "children": [str(ids["Gamma"])]}}
    issue = api.call("GET", f"/api/0/issues/{ids['Gamma']}/", token).json()
    assert issue["id"] == str(ids["Alpha"]) and issue["count"] == "4"
