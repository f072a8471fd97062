"""What the digest tells the alerts about one batch (a small typed input, no I/O).

The digest builds an ``AlertBatch`` from what it wrote (``alerts.digest_input``); the
workflow hooks build ``ErrorActivity`` for one error. ``evaluate`` reads nothing else
about events, so it stays cheap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class EventInfo:
    """The summary fields of one event that rules filter on and messages show."""

    event_id: str
    timestamp: float
    level: str
    environment: str | None
    release: str | None
    title: str
    culprit: str
    tags: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ErrorActivity:
    """One error's events in a batch: the newest event, how many, what changed."""

    error_id: int
    project_id: int
    event: EventInfo  # the newest event of the batch for this error
    events: int = 1  # events of this error stored by the batch
    created: bool = False  # the batch created the error (its first event)
    regressed: bool = False  # the error was resolved and received an event
    # "Resolved in release X": only events of later releases are regressions.
    resolved_in_release: str | None = None
    minutes: Mapping[int, int] = field(default_factory=dict)  # events per unix minute


@dataclass(frozen=True)
class AlertBatch:
    errors: tuple[ErrorActivity, ...] = ()
    # Releases that received sessions in this batch, per project (release health).
    session_releases: Mapping[int, frozenset[str]] = field(default_factory=dict)

    @property
    def project_ids(self) -> set[int]:
        return {a.project_id for a in self.errors} | set(self.session_releases)
