"""What the digest tells the alerts about one batch (a small typed input, no I/O).

The digest builds an ``AlertBatch`` from what it wrote (``alerts.digest_input``); the
workflow hooks build ``ErrorActivity`` for one error. ``evaluate`` reads nothing else
about events, so it stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol


class EventSummary(Protocol):
    """What rules read of an event: ``EventInfo``, or the digest's own prepared event
    (which has these fields, so the digest hands it over without a copy)."""

    @property
    def event_id(self) -> str: ...
    @property
    def timestamp(self) -> float: ...
    @property
    def level(self) -> str: ...
    @property
    def environment(self) -> str | None: ...
    @property
    def release(self) -> str | None: ...
    @property
    def title(self) -> str: ...
    @property
    def culprit(self) -> str: ...
    @property
    def tags(self) -> tuple[tuple[str, str], ...]: ...


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


@dataclass(slots=True)
class ErrorActivity:
    """One error's events in a batch: the newest event, how many, what changed."""

    error_id: int
    project_id: int
    event: EventSummary  # the newest event of the batch for this error
    events: int = 1  # events of this error stored by the batch
    created: bool = False  # the batch created the error (its first event)
    regressed: bool = False  # the error was resolved and received an event
    # "Resolved in release X": only events of later releases are regressions.
    resolved_in_release: str | None = None


@dataclass(frozen=True)
class AlertBatch:
    errors: tuple[ErrorActivity, ...] = ()
    # Releases that received sessions in this batch, per project (release health).
    session_releases: Mapping[int, frozenset[str]] = field(default_factory=dict)

    @property
    def project_ids(self) -> set[int]:
        return {a.project_id for a in self.errors} | set(self.session_releases)


@dataclass(frozen=True)
class LazyBatch:
    """A batch built only when rules need it: ``build(project_ids)`` returns the
    ``AlertBatch`` of those projects (the digest's batches mostly meet no rule)."""

    project_ids: set[int]
    build: Callable[[set[int]], AlertBatch]
