"""The whole app in-process (Starlette's TestClient), and the domain helpers every
in-process test shares: users, tokens, projects, members, and events stored through the
digest's own preparation and batch write. ``Api`` speaks to the REST API with tokens;
``Ui`` keeps cookies and posts forms with their CSRF token."""

from __future__ import annotations

import datetime as dt
import itertools
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.testclient import TestClient

from tracebox.accounts import personal_tokens, users
from tracebox.accounts.tokens import digest
from tracebox.app import create_app
from tracebox.config import Settings
from tracebox.digest.prepare import Preparer
from tracebox.models import AccessLevel, Project, User
from tracebox.protocol.event import normalize_event
from tracebox.store import Database, members, projects
from tracebox.store import digest as store_digest
from tracebox.store import tokens as token_store
from tracebox.tracking import settings as tracking_settings

PASSWORD = "correct horse battery"
CSRF = re.compile(r'name="_csrf" value="([^"]+)"')


@dataclass
class Domain:
    client: TestClient
    db: Database
    settings: Settings
    _n: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def user(self, username: str | None = None, *, admin: bool = False) -> User:
        username = username or f"user{next(self._n)}"
        with self.db.write() as conn:
            return users.create_user(
                conn,
                username=username,
                email=f"{username}@example.com",
                name=username.title(),
                password=PASSWORD,
                is_admin=admin,
            )

    def token(self, user: User, *scopes: str, expires_on: dt.date | None = None) -> str:
        with self.db.write() as conn:
            _, secret = personal_tokens.issue(
                conn, user.id, name="test", scopes=list(scopes or ("api",)), expires_on=expires_on
            )
        return secret

    def project(self, path: str, owner: User | None = None, *, tracking: bool = True) -> Project:
        """A project; ``tracking``: integrated error tracking active, with a client key."""
        with self.db.write() as conn:
            project = projects.create(conn, path, path.rsplit("/", 1)[-1])
            if tracking:
                tracking_settings.save(conn, project.id, active=True, integrated=True, create=True)
            if owner is not None:
                members.add(conn, project.id, owner.id, AccessLevel.OWNER)
        return project

    def member(self, project: Project, user: User, level: AccessLevel) -> None:
        with self.db.write() as conn:
            members.add(conn, project.id, user.id, level)

    def events(
        self, project: Project, *raws: dict[str, Any], received: float | None = None
    ) -> None:
        """Store events through the digest's own preparation and batch write."""
        received = received or time.time()
        preparer = Preparer()
        prepared = [
            preparer.prepare_event(
                project.id, normalize_event(raw, received_at=received, client_ip="192.0.2.1")
            )
            for raw in raws
        ]
        with self.db.write() as conn:
            store_digest.write_events(conn, prepared)


@dataclass
class Api(Domain):
    def expired_token(self, user: User) -> str:
        """A token whose expiry date has passed (made in the past, stored as is)."""
        past = time.time() - 400 * 86400
        with self.db.write() as conn:
            _, secret = personal_tokens.issue(
                conn, user.id, name="old", scopes=["api"], expires_on=None, now=past
            )
        return secret

    def revoked_token(self, user: User) -> str:
        secret = self.token(user)
        with self.db.write() as conn:
            found = token_store.find_by_digest(conn, digest(secret))
            assert found is not None
            token_store.revoke(conn, found[0].id)
        return secret

    def call(self, method: str, path: str, token: str | None = None, **kw: Any) -> httpx.Response:
        headers = dict(kw.pop("headers", {}))
        if token is not None:
            headers["PRIVATE-TOKEN"] = token
        return self.client.request(method, path, headers=headers, **kw)


@dataclass
class Ui(Domain):
    def sign_in(self, user: User, password: str = PASSWORD) -> httpx.Response:
        return self.post(
            "/users/sign_in",
            {"username": user.username, "password": password},
            page="/users/sign_in",
        )

    def csrf(self, page: str) -> str:
        found = CSRF.search(self.client.get(page).text)
        assert found, f"no CSRF token on {page}"
        return found.group(1)

    def post(self, path: str, data: dict[str, Any], *, page: str = "/projects") -> httpx.Response:
        """Post a form the way a browser does: with the CSRF token of a page it loaded."""
        return self.client.post(
            path, data={"_csrf": self.csrf(page), **data}, follow_redirects=False
        )


def api_client(settings: Settings, db: Database, **client: Any) -> Iterator[Api]:
    with TestClient(create_app(settings), **client) as c:
        yield Api(c, db, settings)


def ui_client(settings: Settings, db: Database, **client: Any) -> Iterator[Ui]:
    with TestClient(create_app(settings), base_url="http://testserver", **client) as c:
        yield Ui(c, db, settings)


def exception_event(
    type_: str = "ValueError", value: str = "bad value", **extra: Any
) -> dict[str, Any]:
    """A Python exception event: a library frame, then two in-app frames with context."""
    frames = [
        {
            "filename": "site-packages/lib/core.py",
            "function": "dispatch",
            "lineno": 5,
            "in_app": False,
        },
        {
            "filename": "app/main.py",
            "function": "main",
            "lineno": 10,
            "in_app": True,
            "context_line": "    handle()",
            "pre_context": ["def main():"],
            "post_context": [""],
        },
        {
            "filename": "app/handlers.py",
            "function": "handle",
            "lineno": 42,
            "in_app": True,
            "context_line": f"    raise {type_}('{value}')",
        },
    ]
    event: dict[str, Any] = {
        "platform": "python",
        "level": "error",
        "release": "web@1.0.0",
        "exception": {
            "values": [{"type": type_, "value": value, "stacktrace": {"frames": frames}}]
        },
        "tags": {"browser": "Firefox"},
        "user": {"id": "u1"},
    }
    event.update(extra)
    return event
