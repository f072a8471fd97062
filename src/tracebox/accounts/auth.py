"""Authenticating API requests by personal access token."""

from __future__ import annotations

import time

from tracebox.accounts import tokens
from tracebox.accounts.policy import Principal
from tracebox.errors import Unauthorized
from tracebox.store import Database
from tracebox.store import tokens as token_store


def token_from_headers(private_token: str | None, authorization: str | None) -> str | None:
    """``PRIVATE-TOKEN: <t>`` or ``Authorization: Bearer <t>``, as GitLab accepts."""
    if private_token:
        return private_token.strip()
    if authorization:
        scheme, _, value = authorization.strip().partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    return None


def authenticate(db: Database, raw_token: str | None, *, now: float | None = None) -> Principal:
    """The principal a token stands for. Unknown, expired or revoked tokens, and tokens of
    blocked users, are all 401 alike (no hint which)."""
    now = time.time() if now is None else now
    if not raw_token or len(raw_token) > tokens.MAX_TOKEN_LENGTH:
        raise Unauthorized("")
    with db.read() as conn:
        found = token_store.find_by_digest(conn, tokens.digest(raw_token))
    if found is None:
        raise Unauthorized("")
    token, user = found
    if not token.active(now) or user.is_blocked:
        raise Unauthorized("")
    last = token.last_used_at
    if last is None or now - last >= tokens.LAST_USED_RESOLUTION_SECONDS:
        with db.write() as conn:
            token_store.touch(conn, token.id, now)
    return Principal(user=user, scopes=token.scopes, token_id=token.id)
