"""Tokens (prefix, randomness, digest only, expiry rules, last use, revocation), passwords
(argon2id) and the first-start root account."""

from __future__ import annotations

import datetime as dt
import os
import stat
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from tracebox.accounts import auth, bootstrap, passwords, personal_tokens, tokens, users
from tracebox.errors import Conflict, InvalidParameter, Unauthorized
from tracebox.store import Database
from tracebox.store import tokens as token_store
from tracebox.store.tables import personal_access_tokens
from tracebox.store.tables import users as users_table

DAY = 86400


def make_user(db: Database, name: str = "alice", admin: bool = False) -> int:
    with db.write() as conn:
        return users.create_user(
            conn,
            username=name,
            email=f"{name}@example.com",
            name=name,
            password="long enough",
            is_admin=admin,
        ).id


def test_token_format_and_digest_only(db: Database) -> None:
    user_id = make_user(db)
    with db.write() as conn:
        _, secret = personal_tokens.issue(conn, user_id, name="ci", scopes=["api"], expires_on=None)
    assert secret.startswith("tbpat-")
    assert len(secret) - len("tbpat-") >= 27  # >= 160 bits of base64url
    with db.read() as conn:
        stored = conn.execute(sa.select(personal_access_tokens)).one()._mapping
    assert secret not in str(dict(stored))
    assert stored["token_digest"] == tokens.digest(secret)


def test_expiry_defaults_to_a_year_and_is_capped() -> None:
    now = dt.datetime(2026, 3, 1, 15, 30, tzinfo=dt.UTC).timestamp()
    default = tokens.expiry(None, now=now)
    assert tokens.expiry_date(default) == dt.date(2027, 3, 1)
    assert tokens.expiry(dt.date(2027, 3, 1), now=now) == default  # the limit itself
    with pytest.raises(InvalidParameter):
        tokens.expiry(dt.date(2027, 3, 2), now=now)  # one day past
    with pytest.raises(InvalidParameter):
        tokens.expiry(dt.date(2026, 3, 1), now=now)  # today: already expired


def test_expired_revoked_and_unknown_tokens_are_401(db: Database) -> None:
    user_id = make_user(db)
    with db.write() as conn:
        token, secret = personal_tokens.issue(
            conn, user_id, name="ci", scopes=["read_api"], expires_on=None
        )
    assert auth.authenticate(db, secret).scopes == ("read_api",)
    with pytest.raises(Unauthorized):
        auth.authenticate(db, secret, now=token.expires_at)  # expires at midnight UTC
    with pytest.raises(Unauthorized):
        auth.authenticate(db, "tbpat-" + "x" * 40)
    with pytest.raises(Unauthorized):
        auth.authenticate(db, None)
    with db.write() as conn:
        token_store.revoke(conn, token.id)
    with pytest.raises(Unauthorized):
        auth.authenticate(db, secret)


def test_blocked_users_cannot_authenticate(db: Database) -> None:
    user_id = make_user(db)
    with db.write() as conn:
        _, secret = personal_tokens.issue(conn, user_id, name="ci", scopes=["api"], expires_on=None)
        conn.execute(users_table.update().values(is_blocked=True))
    with pytest.raises(Unauthorized):
        auth.authenticate(db, secret)


def test_last_used_at_is_recorded_at_most_every_ten_minutes(db: Database) -> None:
    user_id = make_user(db)
    with db.write() as conn:
        token, secret = personal_tokens.issue(
            conn, user_id, name="ci", scopes=["api"], expires_on=None
        )
    now = time.time()
    auth.authenticate(db, secret, now=now)
    auth.authenticate(db, secret, now=now + 60)
    with db.read() as conn:
        assert token_store.get(conn, token.id).last_used_at == pytest.approx(now)  # type: ignore[union-attr]
    auth.authenticate(db, secret, now=now + tokens.LAST_USED_RESOLUTION_SECONDS)
    with db.read() as conn:
        stored = token_store.get(conn, token.id)
    assert stored is not None and stored.last_used_at == pytest.approx(now + 600)


def test_scopes_are_validated(db: Database) -> None:
    user_id = make_user(db)
    with db.write() as conn, pytest.raises(InvalidParameter):
        personal_tokens.issue(conn, user_id, name="x", scopes=["sudo"], expires_on=None)
    assert tokens.allows(("read_api",), write=False)  # type: ignore[arg-type]
    assert not tokens.allows(("read_api",), write=True)  # type: ignore[arg-type]


def test_passwords_are_argon2id_and_checked(db: Database) -> None:
    make_user(db)
    with db.read() as conn:
        stored = conn.execute(sa.select(users_table.c.password_hash)).scalar_one()
    assert stored.startswith("$argon2id$")
    with db.read() as conn:
        assert users.check_password(conn, "alice", "long enough") is not None
        assert users.check_password(conn, "alice", "wrong password") is None
        assert users.check_password(conn, "nobody", "long enough") is None
    with db.write() as conn, pytest.raises(Conflict):
        users.create_user(
            conn,
            username="ALICE",
            email="other@example.com",
            name="",
            password="long enough",
            is_admin=False,
        )
    with db.write() as conn, pytest.raises(InvalidParameter):
        users.create_user(
            conn, username="bob", email="bob@example.com", name="", password="short", is_admin=False
        )
    assert passwords.verify_password(passwords.hash_password("pw-123456"), "pw-123456")


def test_root_is_created_once_with_a_private_password_file(db: Database, tmp_path: Path) -> None:
    password = bootstrap.ensure_root(db, tmp_path, "")
    assert password is not None
    path = tmp_path / bootstrap.INITIAL_PASSWORD_FILE
    assert path.read_text().strip() == password
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with db.read() as conn:
        root = users.check_password(conn, "root", password)
    assert root is not None and root.is_admin
    assert bootstrap.ensure_root(db, tmp_path, "") is None  # not on later starts


def test_root_password_from_the_environment_writes_no_file(db: Database, tmp_path: Path) -> None:
    assert bootstrap.ensure_root(db, tmp_path, "from the environment") is None
    assert not (tmp_path / bootstrap.INITIAL_PASSWORD_FILE).exists()
    with db.read() as conn:
        assert users.check_password(conn, "root", "from the environment") is not None
