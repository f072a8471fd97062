# ruff: noqa: E501  (the matrix below reads as a table, one endpoint per line)
"""Every endpoint x every kind of caller, with the status the issue's rules give.

Rules (issue 3, "Permissions"): read errors, releases and events: Reporter+; change an
error's status: Developer+; settings and client keys: Maintainer+; projects and members
are visible to every member, changed by Maintainer+; admins may do everything.
Unauthenticated, expired or revoked -> 401; not a member -> 404; too low a role -> 403;
a read_api token on a write -> 403 insufficient_scope.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import select

from tests.inprocess import Api, exception_event
from tracebox.accounts import personal_tokens
from tracebox.models import AccessLevel
from tracebox.store import (
    activity,
    artifacts,
    attachments,
    client_keys,
    deletion,
    members,
    projects,
)
from tracebox.store.artifacts import NewFile
from tracebox.store.attachments import NewAttachment
from tracebox.store.tables import errors
from tracebox.tracking import settings as tracking_settings

CALLERS = (
    "anonymous",
    "non-member",
    "guest",
    "reporter",
    "developer",
    "maintainer",
    "owner",
    "admin",
    "read_api",
    "expired",
    "revoked",
)


@dataclass
class World:
    api: Api
    tokens: dict[str, str | None]
    project_id: int
    error_id: int
    event_id: str
    owner_id: int
    target_id: int
    counter: itertools.count[int]
    alert_ids: dict[str, int] = field(default_factory=dict)  # rule, action, delivery

    def fresh_user(self) -> int:
        return self.api.user(f"fresh{next(self.counter)}").id

    def fresh_member(self) -> int:
        user = self.api.user(f"fresh{next(self.counter)}")
        with self.api.db.write() as conn:
            members.add(conn, self.project_id, user.id, AccessLevel.REPORTER)
        return user.id

    def fresh_key(self) -> int:
        with self.api.db.write() as conn:
            return client_keys.create(conn, self.project_id).id

    def fresh_error(self) -> int:
        """An error of its own, for a row that deletes one."""
        n = next(self.counter)
        with self.api.db.read() as conn:
            project = projects.get(conn, self.project_id)
        assert project is not None
        self.api.events(project, exception_event(f"Fresh{n}Error", event_id=f"{n:032x}"))
        with self.api.db.read() as conn:
            return int(conn.execute(select(sa.func.max(errors.c.id))).scalar_one())

    def deletion_job(self) -> int:
        with self.api.db.write() as conn:
            job = deletion.create(conn, self.project_id, deletion.JobKind.ERROR, "0", None)
            deletion.finish(conn, job.id, target="0")
        return job.id

    def fresh_comment(self) -> int:
        """A comment by the project's owner on the world's error."""
        with self.api.db.write() as conn:
            found = activity.add(
                conn,
                self.project_id,
                [self.error_id],
                "note",
                user_id=self.owner_id,
                now=time.time(),
                text="by the owner",
            )
        assert found is not None
        return found

    def fresh_owner_token(self) -> int:
        with self.api.db.write() as conn:
            token, _ = personal_tokens.issue(
                conn, self.owner_id, name="victim", scopes=["api"], expires_on=None
            )
        return token.id

    def attachment(self) -> int:
        """An attachment of the event (issue 12): downloads are Reporter+."""
        new = NewAttachment(self.project_id, self.event_id, "a.txt", "text/plain",
                            "event.attachment", 0, "0" * 40, (), 1.0)  # fmt: skip
        with self.api.db.write() as conn:
            attachments.write(conn, [new], max_project_bytes=1)
            return attachments.for_event(conn, self.project_id, self.event_id)[0].id

    def fresh_artifact(self) -> int:
        with self.api.db.write() as conn:
            new = NewFile(f"~/a{next(self.counter)}.js", "source", b"x")
            stored = artifacts.add_release_file(
                conn, self.project_id, new, release="web@1", dist="", now=1.0
            )
        assert stored is not None
        return stored.id


@pytest.fixture
def world(api: Api) -> World:
    owner = api.user("owner")
    project = api.project("acme/web", owner)
    tokens: dict[str, str | None] = {"anonymous": None}
    tokens["non-member"] = api.token(api.user("stranger"))
    for role, level in (
        ("guest", AccessLevel.GUEST),
        ("reporter", AccessLevel.REPORTER),
        ("developer", AccessLevel.DEVELOPER),
        ("maintainer", AccessLevel.MAINTAINER),
    ):
        user = api.user(role)
        api.member(project, user, level)
        tokens[role] = api.token(user)
    tokens["owner"] = api.token(owner)
    tokens["admin"] = api.token(api.user("admin", admin=True))
    tokens["read_api"] = api.token(owner, "read_api")
    tokens["expired"] = api.expired_token(owner)
    tokens["revoked"] = api.revoked_token(owner)
    target = api.user("target")
    api.member(project, target, AccessLevel.REPORTER)
    api.events(project, exception_event(event_id="a" * 32))
    with api.db.write() as conn:
        tracking_settings.set_gitlab_project_url(conn, project.id, "https://gitlab.example.com/a/w")
    errors = api.call(
        "GET", f"/api/v4/projects/{project.id}/error_tracking/errors", tokens["owner"]
    ).json()
    w = World(
        api, tokens, project.id, errors[0]["id"], "a" * 32, owner.id, target.id, itertools.count(1)
    )
    w.alert_ids = alert_world(api, project.id)
    return w


def alert_world(api: Api, project_id: int) -> dict[str, int]:
    """A rule with an email action, and a failed delivery of it."""
    from tracebox.store import alert_outbox
    from tracebox.store import alerts as alert_store

    spec = alert_store.RuleSpec(name="new errors", trigger=alert_store.Trigger.NEW_ERROR)
    with api.db.write() as conn:
        rule = alert_store.create_rule(conn, project_id, spec)
        action = alert_store.add_action(
            conn,
            rule,
            alert_store.Channel.EMAIL,
            target="ops@example.com",
            target_display="ops@example.com",
            encrypted_secret=None,
        )
        nid = alert_outbox.add_notification(
            conn,
            project_id=project_id,
            rule_id=rule.id,
            kind="new_error",
            error_id=None,
            payload={"project": {"id": project_id, "path": "acme/web", "name": "web"}},
            now=1.0,
        )
        receiver = alert_outbox.NewDelivery("email", "ops@example.com", action.id)
        alert_outbox.add_deliveries(
            conn, project_id, nid, [receiver], now=1.0, due=1.0, retry_period_s=0
        )
        [delivery] = alert_outbox.claim(conn, owner="t", now=2.0, limit=1, lease_s=1)
        alert_outbox.finish(conn, delivery.id, "t", status="failed", now=2.0, error="SMTP 550")
    return {"rule": rule.id, "action": action.id, "delivery": delivery.id}


P = "/api/v4/projects/{p}"
ET = P + "/error_tracking"


def _new_user(w: World) -> dict[str, Any]:
    n = next(w.counter)
    return {"username": f"new{n}", "email": f"new{n}@example.com", "password": "long password"}


def _new_project(w: World) -> dict[str, Any]:
    return {"name": "x", "path": f"ns/p{next(w.counter)}"}


def _new_member(w: World) -> dict[str, Any]:
    return {"user_id": w.fresh_user(), "access_level": 30}


def _body(value: dict[str, Any]) -> Any:
    return lambda _w: value


TOKEN = _body({"name": "ci", "scopes": ["api"]})
RENAME = _body({"name": "web", "monitor_access_level": "enabled"})
REPORTER = _body({"access_level": 20})
ACTIVE = _body({"active": True})
ACTIVE_INTEGRATED = _body({"active": True, "integrated": True})
UNRESOLVED = _body({"status": "unresolved"})
RETENTION = _body({"max_age_days": 30})
USER_DELETION = _body({"email": "nobody@example.com"})
QUOTAS = _body({"quotas": [{"window": "day", "max_count": 1000000}]})
PRIVACY = _body({"safe_fields": ["trace_id"], "ip_mode": "anonymize"})
LINK = _body({"issue_id": 3})
NEW_RULE = _body({"name": "x", "trigger": "new_error", "actions": [{"channel": "email"}]})
RULE_CHANGE = _body({"cooldown_minutes": 60})
EMAIL_ACTION = _body({"channel": "email", "target": "oncall@example.com"})
EMAIL_TARGET = _body({"target": "team@example.com"})
NOTIFY = _body({"email": True, "triggers": ["new_error"]})
AR = ET + "/alert_rules"
NEW_RELEASE = _body({"version": "web@1", "projects": ["web"]})
ASSEMBLE = _body({"checksum": "a" * 40, "chunks": ["a" * 40], "projects": ["web"]})
COMMENT = _body({"body": "a comment"})


def MERGE_NOTHING(w: World) -> dict[str, Any]:
    """Permitted callers get as far as "merging needs two errors" (nothing changes)."""
    return {"ids": [w.error_id]}


def UNMERGE_OWN(w: World) -> dict[str, Any]:
    """Permitted callers get as far as "an error keeps its own fingerprint"."""
    with w.api.db.read() as conn:
        own = conn.execute(select(errors.c.grouping_hash).where(errors.c.id == w.error_id))
        return {"grouping_hash": own.scalar_one()}


def BULK(w: World) -> dict[str, Any]:
    return {"ids": [w.error_id], "status": "unresolved"}


# (method, path template, body factory or None, expected statuses in CALLERS order)
# fmt: off
MATRIX: list[tuple[str, str, Any, str]] = [
    #                                                          anon non gst rep dev mnt own adm rap exp rev
    ("GET",    "/api/v4/user", None,                          "401 200 200 200 200 200 200 200 200 401 401"),
    ("GET",    "/api/v4/users", None,                         "401 403 403 403 403 403 403 200 403 401 401"),
    ("POST",   "/api/v4/users", _new_user,                    "401 403 403 403 403 403 403 201 403 401 401"),
    ("GET",    "/api/v4/personal_access_tokens", None,        "401 200 200 200 200 200 200 200 200 401 401"),
    ("POST",   "/api/v4/personal_access_tokens", TOKEN,       "401 201 201 201 201 201 201 201 403 401 401"),
    ("DELETE", "/api/v4/personal_access_tokens/{owner_token}", None,
                                                              "401 404 404 404 404 404 204 204 403 401 401"),
    ("GET",    "/api/v4/projects", None,                      "401 200 200 200 200 200 200 200 200 401 401"),
    ("POST",   "/api/v4/projects", _new_project,              "401 201 201 201 201 201 201 201 403 401 401"),
    ("GET",    P, None,                                       "401 404 200 200 200 200 200 200 200 401 401"),
    ("PUT",    P, RENAME,                                     "401 404 403 403 403 200 200 200 403 401 401"),
    ("GET",    P + "/members", None,                          "401 404 200 200 200 200 200 200 200 401 401"),
    ("POST",   P + "/members", _new_member,                   "401 404 403 403 403 201 201 201 403 401 401"),
    ("PUT",    P + "/members/{target}", REPORTER,             "401 404 403 403 403 200 200 200 403 401 401"),
    ("DELETE", P + "/members/{fresh_member}", None,           "401 404 403 403 403 204 204 204 403 401 401"),
    ("GET",    ET + "/client_keys", None,                     "401 404 403 403 403 200 200 200 200 401 401"),
    ("POST",   ET + "/client_keys", None,                     "401 404 403 403 403 201 201 201 403 401 401"),
    ("DELETE", ET + "/client_keys/{fresh_key}", None,         "401 404 403 403 403 200 200 200 403 401 401"),
    ("GET",    ET + "/settings", None,                        "401 404 403 403 403 200 200 200 200 401 401"),
    ("PATCH",  ET + "/settings", ACTIVE,                      "401 404 403 403 403 200 200 200 403 401 401"),
    ("PUT",    ET + "/settings", ACTIVE_INTEGRATED,           "401 404 403 403 403 200 200 200 403 401 401"),
    ("GET",    ET + "/privacy", None,                         "401 404 403 403 403 200 200 200 200 401 401"),
    ("PUT",    ET + "/privacy", PRIVACY,                      "401 404 403 403 403 200 200 200 403 401 401"),
    ("GET",    ET + "/errors", None,                          "401 404 403 200 200 200 200 200 200 401 401"),
    ("GET",    ET + "/errors/{e}", None,                      "401 404 403 200 200 200 200 200 200 401 401"),
    ("PUT",    ET + "/errors/{e}", UNRESOLVED,                "401 404 403 403 200 200 200 200 403 401 401"),
    ("GET",    ET + "/errors/{e}/events", None,               "401 404 403 200 200 200 200 200 200 401 401"),
    ("GET",    ET + "/errors/{e}/events/latest", None,        "401 404 403 200 200 200 200 200 200 401 401"),
    ("GET",    ET + "/errors/{e}/events/{ev}", None,          "401 404 403 200 200 200 200 200 200 401 401"),
    ("GET",    ET + "/releases", None,                        "401 404 403 200 200 200 200 200 200 401 401"),
    ("PUT",    ET + "/errors", BULK,                          "401 404 403 403 200 200 200 200 403 401 401"),
    ("GET",    ET + "/errors/{e}/activity", None,             "401 404 403 200 200 200 200 200 200 401 401"),
    ("POST",   ET + "/errors/{e}/comments", COMMENT,          "401 404 403 201 201 201 201 201 403 401 401"),
    ("PUT",    ET + "/errors/{e}/comments/{fresh_comment}", COMMENT,
                                                              "401 404 403 403 403 403 200 403 403 401 401"),
    ("DELETE", ET + "/errors/{e}/comments/{fresh_comment}", None,
                                                              "401 404 403 403 403 204 204 204 403 401 401"),
    ("POST",   ET + "/errors/merge", MERGE_NOTHING,             "401 404 403 403 400 400 400 400 403 401 401"),
    ("POST",   ET + "/errors/{e}/unmerge", UNMERGE_OWN,        "401 404 403 403 400 400 400 400 403 401 401"),
    ("GET",    ET + "/environments", None,                    "401 404 403 200 200 200 200 200 200 401 401"),
    ("GET",    "/api/v4/error_tracking/assigned_errors", None, "401 200 200 200 200 200 200 200 200 401 401"),
    ("GET",    AR, None,                                      "401 404 200 200 200 200 200 200 200 401 401"),
    ("POST",   AR, NEW_RULE,                                  "401 404 403 403 403 201 201 201 403 401 401"),
    ("GET",    AR + "/{rule}", None,                          "401 404 200 200 200 200 200 200 200 401 401"),
    ("PUT",    AR + "/{rule}", RULE_CHANGE,                   "401 404 403 403 403 200 200 200 403 401 401"),
    ("DELETE", AR + "/{fresh_rule}", None,                    "401 404 403 403 403 204 204 204 403 401 401"),
    ("POST",   AR + "/{rule}/actions", EMAIL_ACTION,          "401 404 403 403 403 201 201 201 403 401 401"),
    ("PUT",    AR + "/{rule}/actions/{action}", EMAIL_TARGET, "401 404 403 403 403 200 200 200 403 401 401"),
    ("DELETE", AR + "/{fresh_rule}/actions/{fresh_action}", None, "401 404 403 403 403 204 204 204 403 401 401"),
    ("POST",   AR + "/{rule}/actions/{action}/test", None,    "401 404 403 403 403 200 200 200 403 401 401"),
    ("GET",    ET + "/alert_deliveries", None,                "401 404 403 200 200 200 200 200 200 401 401"),
    ("GET",    ET + "/alert_deliveries/{delivery}", None,     "401 404 403 200 200 200 200 200 200 401 401"),
    ("POST",   ET + "/alert_deliveries/{delivery}/retry", None,
                                                              "401 404 403 403 403 200 200 200 403 401 401"),
    ("GET",    ET + "/notification_settings", None,           "401 404 403 200 200 200 200 200 200 401 401"),
    ("PUT",    ET + "/notification_settings", NOTIFY,         "401 404 403 200 200 200 200 200 403 401 401"),
    ("GET",    ET + "/artifacts?release=web@1", None,         "401 404 403 200 200 200 200 200 200 401 401"),
    # issue 12: attachments, user feedback and logs are read as errors are (Reporter+)
    ("GET",    ET + "/errors/{e}/events/{ev}/attachments", None, "401 404 403 200 200 200 200 200 200 401 401"),
    ("GET",    ET + "/attachments/{attachment}", None,        "401 404 403 200 200 200 200 200 200 401 401"),
    ("GET",    ET + "/user_feedback", None,                   "401 404 403 200 200 200 200 200 200 401 401"),
    ("GET",    ET + "/errors/{e}/user_feedback", None,        "401 404 403 200 200 200 200 200 200 401 401"),
    ("GET",    ET + "/logs", None,                            "401 404 403 200 200 200 200 200 200 401 401"),
    ("GET",    ET + "/client_reports", None,                  "401 404 403 200 200 200 200 200 200 401 401"),
    ("DELETE", ET + "/artifacts/{fresh_artifact}", None,      "401 404 403 403 403 204 204 204 403 401 401"),
    ("GET",    "/api/0/projects/", None,                      "401 200 200 200 200 200 200 200 200 401 401"),
    ("GET",    "/api/0/projects/acme/web/issues/", None,      "401 404 403 200 200 200 200 200 200 401 401"),
    ("GET",    "/api/0/issues/{e}/", None,                    "401 404 403 200 200 200 200 200 200 401 401"),
    ("GET",    "/api/0/issues/{e}/events/latest/", None,      "401 404 403 200 200 200 200 200 200 401 401"),
    ("PUT",    "/api/0/issues/{e}/", UNRESOLVED,              "401 404 403 403 200 200 200 200 403 401 401"),
    ("GET",    P + "/usage", None,                            "401 404 403 200 200 200 200 200 200 401 401"),
    ("GET",    P + "/retention", None,                        "401 404 403 200 200 200 200 200 200 401 401"),
    ("PUT",    P + "/retention", RETENTION,                   "401 404 403 403 403 200 200 200 403 401 401"),
    ("GET",    P + "/quotas", None,                           "401 404 403 403 403 200 200 200 200 401 401"),
    ("PUT",    P + "/quotas", QUOTAS,                         "401 404 403 403 403 200 200 200 403 401 401"),
    ("GET",    P + "/audit_events", None,                     "401 404 403 403 403 200 200 200 200 401 401"),
    ("GET",    "/api/v4/audit_events", None,                  "401 403 403 403 403 403 403 200 403 401 401"),
    ("GET",    "/api/v4/application/storage", None,           "401 403 403 403 403 403 403 200 403 401 401"),
    ("DELETE", ET + "/errors/{fresh_error}", None,            "401 404 403 403 403 202 202 202 403 401 401"),
    ("POST",   ET + "/user_deletions", USER_DELETION,         "401 404 403 403 403 202 202 202 403 401 401"),
    ("GET",    ET + "/deletions", None,                       "401 404 403 403 403 200 200 200 200 401 401"),
    ("GET",    ET + "/deletions/{job}", None,                 "401 404 403 403 403 200 200 200 200 401 401"),
    ("PUT",    "/api/0/projects/acme/web/issues/?id={e}", UNRESOLVED,
                                                              "401 404 403 403 200 200 200 200 403 401 401"),
    ("GET",    "/api/0/organizations/acme/repos/", None,      "401 404 200 200 200 200 200 200 200 401 401"),
    ("POST",   "/api/0/issues/{e}/plugins/gitlab/link/", LINK,"401 404 403 403 200 200 200 200 403 401 401"),
    # sentry-cli (docs/sourcemaps.md): Developer+ creates releases and uploads
    ("GET",    "/api/0/", None,                               "200 200 200 200 200 200 200 200 200 401 401"),
    ("GET",    "/api/0/organizations/acme/projects/", None,   "401 404 200 200 200 200 200 200 200 401 401"),
    ("GET",    "/api/0/organizations/acme/chunk-upload/", None, "401 404 200 200 200 200 200 200 200 401 401"),
    ("POST",   "/api/0/organizations/acme/releases/", NEW_RELEASE, "401 404 403 403 201 201 201 201 403 401 401"),
    ("GET",    "/api/0/organizations/acme/releases/web@1/", None, "401 404 404 200 200 200 200 200 200 401 401"),
    ("POST",   "/api/0/organizations/acme/artifactbundle/assemble/", ASSEMBLE, "401 404 403 403 200 200 200 200 403 401 401"),
    # last: it erases the project's errors and artifacts, which the rows above read
    ("DELETE", ET + "/data", None,                            "401 404 403 403 403 202 202 202 403 401 401"),
]
# fmt: on


def _path(template: str, w: World) -> str:
    values = {"p": w.project_id, "e": w.error_id, "ev": w.event_id, "target": w.target_id}
    if "{fresh_member}" in template:
        values["fresh_member"] = w.fresh_member()
    if "{fresh_comment}" in template:
        values["fresh_comment"] = w.fresh_comment()
    if "{fresh_key}" in template:
        values["fresh_key"] = w.fresh_key()
    if "{attachment}" in template:
        values["attachment"] = w.attachment()
    if "{fresh_artifact}" in template:
        values["fresh_artifact"] = w.fresh_artifact()
    if "{owner_token}" in template:
        values["owner_token"] = w.fresh_owner_token()
    if "{fresh_error}" in template:
        values["fresh_error"] = w.fresh_error()
    if "{job}" in template:
        values["job"] = w.deletion_job()
    values.update(w.alert_ids)
    if "{fresh_rule}" in template or "{fresh_action}" in template:
        fresh = alert_world(w.api, w.project_id)
        values["fresh_rule"], values["fresh_action"] = fresh["rule"], fresh["action"]
    return template.format(**values)


def _expected_body(path: str, caller: str, method: str, status: int) -> dict[str, Any] | None:
    """The exact error body, where the issue fixes it."""
    if status == 401:
        return {"message": "401 Unauthorized"}
    if status == 403 and caller == "read_api" and method != "GET":
        return {
            "error": "insufficient_scope",
            "error_description": "The request requires higher privileges than provided "
            "by the access token.",
            "scope": "api",
        }
    if status == 403:
        return {"message": "403 Forbidden"}
    if status == 404 and "/projects/" in path:
        return {"message": "404 Project Not Found"}
    return None


def test_permission_matrix(world: World) -> None:
    mismatches = []
    for method, template, body, expected in MATRIX:
        for caller, want in zip(CALLERS, expected.split(), strict=True):
            path = _path(template, world)
            json_body = body(world) if body else None
            r = world.api.call(method, path, world.tokens[caller], json=json_body)
            shape = _shape_problem(r, path, caller, method)
            if r.status_code != int(want) or shape:
                mismatches.append(
                    f"{method} {template} as {caller}: {r.status_code} "
                    f"(want {want}) {shape or r.text[:120]}"
                )
    assert not mismatches, "\n".join(mismatches)


def _shape_problem(r: Any, path: str, caller: str, method: str) -> str | None:
    if r.status_code < 400:
        return None
    body = r.json()
    if path.startswith("/api/0/"):
        return None if set(body) == {"detail"} else f"Sentry error shape expected, got {body}"
    want = _expected_body(path, caller, method, r.status_code)
    if want is not None and body != want:
        return f"body {body} != {want}"
    return None
