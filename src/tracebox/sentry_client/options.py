"""The client's bounds, without the client: ``tracking`` builds them from the settings
when the app is created, and the client (with httpx) is loaded on the first request."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ClientOptions:
    connect_timeout_s: float = 5.0
    read_timeout_s: float = 10.0
    max_response_bytes: int = 1024 * 1024  # as GitLab's Sentry client (1 MB)
    allow_local_network: bool = False
