"""Users."""

from __future__ import annotations

import time
from typing import Any, TypeAlias

from sqlalchemy import Connection, Row, func, select

from tracebox.models import User
from tracebox.store.tables import users

AnyRow: TypeAlias = Row[*tuple[Any, ...]]


def user_from_row(row: AnyRow) -> User:
    m = row._mapping
    return User(
        id=m["id"],
        username=m["username"],
        email=m["email"],
        name=m["name"],
        is_admin=bool(m["is_admin"]),
        is_blocked=bool(m["is_blocked"]),
        created_at=m["created_at"],
    )


USER_COLUMNS = (
    users.c.id,
    users.c.username,
    users.c.email,
    users.c.name,
    users.c.is_admin,
    users.c.is_blocked,
    users.c.created_at,
)


def create(
    conn: Connection, *, username: str, email: str, name: str, password_hash: str, is_admin: bool
) -> User:
    now = time.time()
    result = conn.execute(
        users.insert().values(
            username=username,
            email=email,
            name=name,
            password_hash=password_hash,
            is_admin=is_admin,
            is_blocked=False,
            created_at=now,
        )
    )
    user_id = result.inserted_primary_key[0] if result.inserted_primary_key else None
    assert user_id is not None
    return User(int(user_id), username, email, name, is_admin, False, now)


def get(conn: Connection, user_id: int) -> User | None:
    row = conn.execute(select(*USER_COLUMNS).where(users.c.id == user_id)).first()
    return user_from_row(row) if row else None


def get_by_username(conn: Connection, username: str) -> User | None:
    query = select(*USER_COLUMNS).where(func.lower(users.c.username) == func.lower(username))
    row = conn.execute(query).first()
    return user_from_row(row) if row else None


def exists(conn: Connection, *, username: str, email: str) -> bool:
    """True when the username or the email is taken, ignoring case as the database's
    ``lower()`` does on both sides (SQLite's folds ASCII only)."""
    query = select(users.c.id).where(
        (func.lower(users.c.username) == func.lower(username))
        | (func.lower(users.c.email) == func.lower(email))
    )
    return conn.execute(query.limit(1)).first() is not None


def password_hash(conn: Connection, user_id: int) -> str | None:
    query = select(users.c.password_hash).where(users.c.id == user_id)
    value = conn.execute(query).scalar_one_or_none()
    return str(value) if value is not None else None


def set_password_hash(conn: Connection, user_id: int, password_hash: str) -> None:
    conn.execute(users.update().where(users.c.id == user_id).values(password_hash=password_hash))


def count(conn: Connection) -> int:
    return int(conn.execute(select(func.count()).select_from(users)).scalar_one())


def list_page(conn: Connection, *, offset: int, limit: int) -> list[User]:
    query = select(*USER_COLUMNS).order_by(users.c.id).offset(offset).limit(limit)
    return [user_from_row(r) for r in conn.execute(query)]


def set_blocked(conn: Connection, user_id: int, blocked: bool) -> bool:
    """Block or unblock a user; False when there is no such user."""
    result = conn.execute(users.update().where(users.c.id == user_id).values(is_blocked=blocked))
    return result.rowcount > 0
