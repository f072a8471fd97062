"""Issuing and revoking personal access tokens."""

from __future__ import annotations

import datetime as dt
import time

from sqlalchemy import Connection

from tracebox.accounts import tokens
from tracebox.accounts.policy import Principal, authorize_token
from tracebox.errors import InvalidParameter, NotFound
from tracebox.models import PersonalAccessToken, Scope
from tracebox.store import tokens as token_store

MAX_NAME_LENGTH = 255


def issue(
    conn: Connection,
    user_id: int,
    *,
    name: str,
    scopes: list[str],
    expires_on: dt.date | None,
    now: float | None = None,
) -> tuple[PersonalAccessToken, str]:
    """Create a token; returns it and the secret, which is never stored nor shown again."""
    now = time.time() if now is None else now
    name = name.strip()
    if not name or len(name) > MAX_NAME_LENGTH or "\x00" in name:
        raise InvalidParameter("name is invalid")
    parsed: tuple[Scope, ...] = tokens.parse_scopes(scopes)
    secret = tokens.generate()
    token = token_store.create(
        conn,
        user_id=user_id,
        name=name,
        digest=tokens.digest(secret),
        scopes=parsed,
        expires_at=tokens.expiry(expires_on, now=now),
    )
    return token, secret


def revoke(conn: Connection, principal: Principal, token_id: int) -> None:
    """Revoke one's own token (admins: anyone's). Others' tokens are not found."""
    token = token_store.get(conn, token_id)
    if token is None:
        raise NotFound("Personal Access Token")
    authorize_token(principal, token.user_id)
    token_store.revoke(conn, token_id)
