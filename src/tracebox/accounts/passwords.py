"""Password hashing with argon2id (OWASP's first choice; ARCHITECTURE contract 5)."""

from __future__ import annotations

import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

# argon2-cffi's defaults are RFC 9106's low-memory profile: argon2id, t=3, m=64 MiB, p=4.
_HASHER = PasswordHasher()

MIN_PASSWORD_LENGTH = 8  # as GitLab's default minimum
MAX_PASSWORD_LENGTH = 128  # as GitLab; also bounds the hashing work per request


def hash_password(password: str) -> str:
    return _HASHER.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    try:
        return _HASHER.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def random_password() -> str:
    """24 URL-safe characters (144 bits), for the initial root password and the CLI."""
    return secrets.token_urlsafe(18)
