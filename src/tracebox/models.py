"""Domain records that cross module boundaries: the bottom floor, so that ``store`` and
every package above it share them without importing upwards. No I/O here."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum

MAX_ID = 2**63 - 1  # BIGINT ids: larger numbers cannot name a row and are refused


class ErrorStatus(StrEnum):
    UNRESOLVED = "unresolved"
    RESOLVED = "resolved"
    IGNORED = "ignored"


@dataclass(frozen=True)
class Project:
    id: int
    path: str
    name: str
    monitor_access_level: str
    created_at: float


@dataclass(frozen=True)
class ClientKey:
    id: int
    project_id: int
    public_key: str
    secret_key: str
    active: bool
    created_at: float


@dataclass(frozen=True)
class IngestKey:
    """What ingestion needs to know about a client key, in one lookup."""

    key_id: int
    project_id: int
    public_key: str
    secret_key: str
    key_active: bool
    tracking_active: bool  # error tracking active with the integrated backend


@dataclass(frozen=True)
class ErrorTrackingSettings:
    project_id: int
    active: bool
    integrated: bool
    api_url: str | None
    project_name: str | None
    updated_at: float
    # Where the project's GitLab issues live (https://gitlab.example.com/grp/app), so an
    # issue GitLab links to an error by number gets its URL.
    gitlab_project_url: str | None = None


# --- accounts ------------------------------------------------------------------------
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
