"""Personal access tokens, stored as SHA-256 digests only."""

from __future__ import annotations

import time
from typing import Any, TypeAlias

from sqlalchemy import Connection, Row, func, select

from tracebox.models import PersonalAccessToken, Scope, User
from tracebox.store.accounts import USER_COLUMNS
from tracebox.store.tables import personal_access_tokens as pats
from tracebox.store.tables import users

AnyRow: TypeAlias = Row[*tuple[Any, ...]]

TOKEN_COLUMNS = (
    pats.c.id,
    pats.c.user_id,
    pats.c.name,
    pats.c.scopes,
    pats.c.expires_at,
    pats.c.revoked,
    pats.c.created_at,
    pats.c.last_used_at,
)


def _token(row: AnyRow) -> PersonalAccessToken:
    m = row._mapping
    return PersonalAccessToken(
        id=m["id"],
        user_id=m["user_id"],
        name=m["name"],
        scopes=tuple(Scope(s) for s in str(m["scopes"]).split()),
        expires_at=m["expires_at"],
        revoked=bool(m["revoked"]),
        created_at=m["created_at"],
        last_used_at=m["last_used_at"],
    )


def create(
    conn: Connection,
    *,
    user_id: int,
    name: str,
    digest: str,
    scopes: tuple[Scope, ...],
    expires_at: float,
) -> PersonalAccessToken:
    now = time.time()
    result = conn.execute(
        pats.insert().values(
            user_id=user_id,
            name=name,
            token_digest=digest,
            scopes=" ".join(scopes),
            expires_at=expires_at,
            revoked=False,
            created_at=now,
        )
    )
    token_id = result.inserted_primary_key[0] if result.inserted_primary_key else None
    assert token_id is not None
    return PersonalAccessToken(int(token_id), user_id, name, scopes, expires_at, False, now, None)


def find_by_digest(conn: Connection, digest: str) -> tuple[PersonalAccessToken, User] | None:
    """The token and its user in one query (every API request does this)."""
    query = (
        select(*TOKEN_COLUMNS, *(c.label(f"u_{c.name}") for c in USER_COLUMNS))
        .select_from(pats.join(users, users.c.id == pats.c.user_id))
        .where(pats.c.token_digest == digest)
    )
    row = conn.execute(query).first()
    if row is None:
        return None
    m = row._mapping
    user = User(
        id=m["user_id"],
        username=m["u_username"],
        email=m["u_email"],
        name=m["u_name"],
        is_admin=bool(m["u_is_admin"]),
        is_blocked=bool(m["u_is_blocked"]),
        created_at=m["u_created_at"],
    )
    return _token(row), user


def get(conn: Connection, token_id: int) -> PersonalAccessToken | None:
    row = conn.execute(select(*TOKEN_COLUMNS).where(pats.c.id == token_id)).first()
    return _token(row) if row else None


def touch(conn: Connection, token_id: int, now: float) -> None:
    conn.execute(pats.update().where(pats.c.id == token_id).values(last_used_at=now))


def revoke(conn: Connection, token_id: int) -> None:
    conn.execute(pats.update().where(pats.c.id == token_id).values(revoked=True))


def count(conn: Connection, *, user_id: int | None) -> int:
    query = select(func.count()).select_from(pats)
    if user_id is not None:
        query = query.where(pats.c.user_id == user_id)
    return int(conn.execute(query).scalar_one())


def list_page(
    conn: Connection, *, user_id: int | None, offset: int, limit: int
) -> list[PersonalAccessToken]:
    """Tokens of one user (or of everyone when ``user_id`` is None), oldest first."""
    query = select(*TOKEN_COLUMNS).order_by(pats.c.id).offset(offset).limit(limit)
    if user_id is not None:
        query = query.where(pats.c.user_id == user_id)
    return [_token(r) for r in conn.execute(query)]
