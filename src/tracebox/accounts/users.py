"""Creating users and checking their credentials."""

from __future__ import annotations

import functools
import re

from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError

from tracebox.accounts import passwords
from tracebox.errors import Conflict, InvalidParameter, NotFound
from tracebox.models import User
from tracebox.store import accounts

# Anchored, so the API's OpenAPI document can publish them as they are.
USERNAME_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$")  # as GitLab's usernames
EMAIL_PATTERN = re.compile(r"^[^@\s\x00]{1,200}@[^@\s\x00]{1,54}$")
MAX_NAME_LENGTH = 255


def validate_password(password: str) -> None:
    if not passwords.MIN_PASSWORD_LENGTH <= len(password) <= passwords.MAX_PASSWORD_LENGTH:
        raise InvalidParameter(
            f"password must be {passwords.MIN_PASSWORD_LENGTH} to "
            f"{passwords.MAX_PASSWORD_LENGTH} characters"
        )


def create_user(
    conn: Connection, *, username: str, email: str, name: str, password: str, is_admin: bool
) -> User:
    """Validate and create a user; 409 when the username or email is taken."""
    if not USERNAME_PATTERN.fullmatch(username):
        raise InvalidParameter("username is invalid")
    if not EMAIL_PATTERN.fullmatch(email):
        raise InvalidParameter("email is invalid")
    if len(name) > MAX_NAME_LENGTH or "\x00" in name:
        raise InvalidParameter("name is invalid")
    validate_password(password)
    if accounts.exists(conn, username=username, email=email):
        raise Conflict("Username or email has already been taken")
    try:
        return accounts.create(
            conn,
            username=username,
            email=email,
            name=name or username,
            password_hash=passwords.hash_password(password),
            is_admin=is_admin,
        )
    except IntegrityError as e:  # a concurrent create won the unique constraint
        raise Conflict("Username or email has already been taken") from e


def set_password(conn: Connection, username: str, password: str) -> User:
    validate_password(password)
    user = accounts.get_by_username(conn, username)
    if user is None:
        raise NotFound("User")
    accounts.set_password_hash(conn, user.id, passwords.hash_password(password))
    return user


def check_password(conn: Connection, username: str, password: str) -> User | None:
    """The user when the password is theirs and they are not blocked (UI sign-in)."""
    user = accounts.get_by_username(conn, username)
    stored = accounts.password_hash(conn, user.id) if user else None
    if user is None or stored is None or user.is_blocked:
        passwords.verify_password(_dummy_hash(), password)  # same work either way
        return None
    return user if passwords.verify_password(stored, password) else None


@functools.cache
def _dummy_hash() -> str:
    """Hashed on first use, not at import (an argon2 hash takes tens of milliseconds)."""
    return passwords.hash_password("not a password of anyone")


def set_blocked(conn: Connection, user_id: int, blocked: bool, *, acting_user_id: int) -> User:
    """Block (or unblock) a user: a blocked user can neither sign in nor use a token.
    Nobody blocks themselves, so an instance never locks out its last admin by accident."""
    if user_id == acting_user_id:
        raise InvalidParameter("you cannot block or unblock yourself")
    if not accounts.set_blocked(conn, user_id, blocked):
        raise NotFound("User")
    user = accounts.get(conn, user_id)
    assert user is not None
    return user
