"""The whole app in-process with a cookie-keeping client, plus helpers to make users,
projects and errors and to sign in and post forms (with their CSRF token)."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from tracebox.accounts import users
from tracebox.accounts.models import AccessLevel, User
from tracebox.app import create_app
from tracebox.config import Settings
from tracebox.digest.prepare import Preparer
from tracebox.models import Project
from tracebox.protocol.event import normalize_event
from tracebox.store import Database, members, projects
from tracebox.store import digest as store_digest
from tracebox.tracking import settings as tracking_settings

PASSWORD = "correct horse battery"
CSRF = re.compile(r'name="_csrf" value="([^"]+)"')


@dataclass
class Ui:
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

    def project(self, path: str, owner: User | None = None, *, tracking: bool = True) -> Project:
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

    def events(self, project: Project, *raws: dict[str, Any]) -> None:
        preparer = Preparer()
        prepared = [
            preparer.prepare_event(
                project.id, normalize_event(raw, received_at=time.time(), client_ip="192.0.2.1")
            )
            for raw in raws
        ]
        with self.db.write() as conn:
            store_digest.write_events(conn, prepared)

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


def exception_event(
    type_: str = "ValueError", value: str = "bad value", **extra: Any
) -> dict[str, Any]:
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


@pytest.fixture
def ui(settings: Settings, db: Database) -> Iterator[Ui]:
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        yield Ui(client, db, settings)
