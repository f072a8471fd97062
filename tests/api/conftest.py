"""The whole app in-process, with helpers to make users, tokens, projects and errors."""

from __future__ import annotations

import datetime as dt
import itertools
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from tracebox.accounts import personal_tokens, users
from tracebox.accounts.models import AccessLevel, User
from tracebox.app import create_app
from tracebox.config import Settings
from tracebox.digest.prepare import Preparer
from tracebox.models import Project
from tracebox.protocol.event import normalize_event
from tracebox.store import Database, members, projects
from tracebox.store import digest as store_digest
from tracebox.store import tokens as token_store

PASSWORD = "correct horse battery"


@dataclass
class Api:
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
                name=username,
                password=PASSWORD,
                is_admin=admin,
            )

    def token(self, user: User, *scopes: str, expires_on: dt.date | None = None) -> str:
        with self.db.write() as conn:
            _, secret = personal_tokens.issue(
                conn,
                user.id,
                name="test",
                scopes=list(scopes or ("api",)),
                expires_on=expires_on,
            )
        return secret

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
            found = token_store.find_by_digest(conn, _digest(secret))
            assert found is not None
            token_store.revoke(conn, found[0].id)
        return secret

    def project(self, path: str, owner: User | None = None, *, tracking: bool = True) -> Project:
        with self.db.write() as conn:
            project = projects.create(conn, path, path.rsplit("/", 1)[-1])
            if tracking:
                projects.put_settings(conn, project.id, active=True, integrated=True)
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

    def call(self, method: str, path: str, token: str | None = None, **kw: Any) -> httpx.Response:
        headers = dict(kw.pop("headers", {}))
        if token is not None:
            headers["PRIVATE-TOKEN"] = token
        return self.client.request(method, path, headers=headers, **kw)


def _digest(secret: str) -> str:
    from tracebox.accounts.tokens import digest

    return digest(secret)


def exception_event(
    type_: str = "ValueError", value: str = "bad value", **extra: Any
) -> dict[str, Any]:
    frames = [
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
    event = {
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


@pytest.fixture
def api(settings: Settings, db: Database) -> Iterator[Api]:
    with TestClient(create_app(settings)) as client:
        yield Api(client, db, settings)
