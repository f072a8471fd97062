"""Personal access tokens: generation, digest, scopes and expiry rules (no I/O).

A token is ``tbpat-`` plus 40 URL-safe characters (240 bits of randomness); only its
SHA-256 digest is stored (ARCHITECTURE contract 5). Expiry is a date: the token stops
working at midnight UTC that day, as GitLab's; it defaults to one year after creation
and is never more than a year away (spec 8).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from tracebox.errors import InvalidParameter
from tracebox.models import Scope

TOKEN_PREFIX = "tbpat-"
TOKEN_RANDOM_BYTES = 30  # 240 bits; the issue asks for at least 160
MAX_LIFETIME_DAYS = 365  # spec 8: one year, the default and the maximum
MAX_TOKEN_LENGTH = 128  # longer header values cannot be a token; refused before hashing
# last_used_at is written at most this often per token, so reads stay reads (as GitLab).
LAST_USED_RESOLUTION_SECONDS = 600.0


def generate() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_RANDOM_BYTES)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def parse_scopes(values: list[str]) -> tuple[Scope, ...]:
    if not values:
        raise InvalidParameter("scopes is missing")
    try:
        return tuple(sorted({Scope(v) for v in values}))
    except ValueError as e:
        raise InvalidParameter("scopes does not have a valid value") from e


def expiry(expires_on: dt.date | None, *, now: float) -> float:
    """Unix seconds at which a token created ``now`` expires."""
    today = dt.datetime.fromtimestamp(now, dt.UTC).date()
    latest = today + dt.timedelta(days=MAX_LIFETIME_DAYS)
    day = latest if expires_on is None else expires_on
    if day <= today:
        raise InvalidParameter("expires_at must be in the future")
    if day > latest:
        raise InvalidParameter(f"expires_at must be at most {MAX_LIFETIME_DAYS} days away")
    return midnight(day)


def midnight(day: dt.date) -> float:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC).timestamp()


def expiry_date(expires_at: float) -> dt.date:
    return dt.datetime.fromtimestamp(expires_at, dt.UTC).date()


def allows(scopes: tuple[Scope, ...], *, write: bool) -> bool:
    return Scope.API in scopes or (not write and Scope.READ_API in scopes)
