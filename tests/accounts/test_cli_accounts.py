"""``tracebox user create``, ``user set-password`` and ``token create``."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

from tests.helpers import cli, tracebox_env
from tracebox.accounts import auth, users
from tracebox.config import Settings
from tracebox.store import Database


def test_user_and_token_commands(settings: Settings, db: Database) -> None:
    made = cli(settings, "user", "create", "alice", "--email", "alice@example.com")
    assert made["username"] == "alice" and len(made["password"]) >= 20
    cli(settings, "user", "set-password", "alice", "--password", "a new long password")
    with db.read() as conn:
        assert users.check_password(conn, "alice", "a new long password") is not None
    expires = (dt.date.today() + dt.timedelta(days=30)).isoformat()
    token = cli(
        settings, "token", "create", "--user", "alice", "--scope", "read_api", "--expires", expires
    )
    assert token["expires_at"] == expires and token["scopes"] == ["read_api"]
    assert auth.authenticate(db, token["token"]).user.username == "alice"


def test_cli_reports_errors_without_a_traceback(settings: Settings, db: Database) -> None:
    cli(settings, "user", "create", "bob", "--email", "bob@example.com")
    for args in (
        ["user", "create", "bob", "--email", "bob2@example.com"],
        ["token", "create", "--user", "bob", "--scope", "api", "--expires", "2000-01-01"],
        ["token", "create", "--user", "nobody", "--scope", "api"],
    ):
        out = subprocess.run(
            [sys.executable, "-m", "tracebox", *args],
            env=tracebox_env(settings),
            capture_output=True,
            text=True,
        )
        assert out.returncode == 1, args
        assert "Traceback" not in out.stderr and out.stderr.strip(), args
