"""Account records that cross module boundaries (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum


class AccessLevel(IntEnum):
    """Project roles, with GitLab's numeric access levels."""

    GUEST = 10
    REPORTER = 20
    DEVELOPER = 30
    MAINTAINER = 40
    OWNER = 50


class Scope(StrEnum):
    API = "api"  # read and write
    READ_API = "read_api"  # read only


@dataclass(frozen=True)
class User:
    id: int
    username: str
    email: str
    name: str
    is_admin: bool
    is_blocked: bool
    created_at: float


@dataclass(frozen=True)
class PersonalAccessToken:
    id: int
    user_id: int
    name: str
    scopes: tuple[Scope, ...]
    expires_at: float  # unix seconds: midnight UTC of the expiry date (as GitLab)
    revoked: bool
    created_at: float
    last_used_at: float | None

    def active(self, now: float) -> bool:
        return not self.revoked and now < self.expires_at


@dataclass(frozen=True)
class Member:
    project_id: int
    user: User
    access_level: AccessLevel
    created_at: float
