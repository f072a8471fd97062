"""Domain records that cross module boundaries. No I/O here."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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
