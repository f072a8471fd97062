"""What an error source returns: the same records for the integrated and external backends."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any, Generic, TypeVar

from tracebox.models import ErrorStatus
from tracebox.privacy import ScrubRecord

T = TypeVar("T")


class ErrorSort(StrEnum):
    LAST_SEEN = "last_seen"
    FIRST_SEEN = "first_seen"
    FREQUENCY = "frequency"


class StatusFilter(StrEnum):
    UNRESOLVED = "unresolved"
    RESOLVED = "resolved"
    IGNORED = "ignored"
    ALL = "all"

    def status(self) -> ErrorStatus | None:
        return None if self is StatusFilter.ALL else ErrorStatus(self.value)


@dataclass(frozen=True)
class Bucket:
    time: float  # unix seconds at the start of the hour or day
    count: int


class Resolution(StrEnum):
    """How an error was resolved (Sentry's three ways)."""

    NOW = "now"  # any later event reopens it
    IN_RELEASE = "in_release"  # fixed in ``release``: events of older releases are expected
    IN_NEXT_RELEASE = "in_next_release"  # fixed after ``release`` (the latest then)


@dataclass(frozen=True)
class UserRef:
    id: int
    username: str
    name: str
    email: str = ""


@dataclass(frozen=True)
class StatusDetails:
    """Why an error is resolved or ignored, and until when it stays so."""

    resolution: Resolution | None = None
    release: str | None = None  # in_release: the fixed release; in_next_release: the one before
    resolved_at: float | None = None
    ignore_until: float | None = None  # unix seconds
    ignore_count: int | None = None  # ... until this many more events
    ignore_user_count: int | None = None  # ... until this many more users


@dataclass(frozen=True)
class ErrorSummary:
    id: int
    project_id: int
    title: str
    type: str
    value: str
    culprit: str
    status: ErrorStatus
    events_count: int
    users_count: int
    first_seen: float
    last_seen: float
    platform: str
    level: str
    frequency: list[Bucket]  # 24 hourly counts, oldest first, ending with the current hour
    regressed: bool = False  # reopened by a new event after it was resolved
    unhandled: bool = False  # an event's exception reached no handler in the application
    assignee: UserRef | None = None
    status_details: StatusDetails = field(default_factory=StatusDetails)
    in_review: bool = False  # new, regressed or unignored in the last 7 days, not reviewed
    external_issue_url: str | None = None  # the issue it is linked to (a GitLab issue)


@dataclass(frozen=True)
class Frame:
    filename: str | None
    abs_path: str | None
    function: str | None
    module: str | None
    lineno: int | None
    colno: int | None
    in_app: bool | None
    context: list[tuple[int, str]]  # pre-context, the line itself, post-context
    # Source maps (docs/sourcemaps.md): True mapped to the original source, False not
    # mapped (mapping_error says why), None not a minified JavaScript frame.
    symbolicated: bool | None = None
    mapping_error: str | None = None  # a symbolication.Failure value
    mapping_detail: str | None = None  # the explanation shown to users
    source_map: str | None = None  # the uploaded map that mapped this frame
    mapped_with: str | None = None  # "debug_id" or "release": how the map was found
    # Local variables as the SDK sent them (Python: reprs); untrusted, shown escaped.
    vars: dict[str, Any] | None = None


@dataclass(frozen=True)
class Mechanism:
    """How an exception was captured (Sentry's ``mechanism``): ``handled`` False means it
    reached no handler in the application (what people triage by); ``exception_id`` and
    ``parent_id`` place the exception in an exception group's tree."""

    type: str
    handled: bool | None = None
    synthetic: bool = False
    description: str | None = None
    help_link: str | None = None
    exception_id: int | None = None
    parent_id: int | None = None
    is_exception_group: bool = False
    source: str | None = None  # e.g. "exceptions[0]", "__cause__"
    data: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None


@dataclass(frozen=True)
class ExceptionInfo:
    type: str | None
    value: str | None
    module: str | None
    frames: list[Frame]  # oldest first, as the SDKs send them
    raw_frames: list[Frame] = field(default_factory=list)  # minified, when frames were mapped
    mechanism: Mechanism | None = None


@dataclass(frozen=True)
class Event:
    event_id: str
    error_id: int
    project_id: int
    timestamp: float
    received_at: float
    level: str
    platform: str
    environment: str | None
    release: str | None
    logger: str | None
    message: str
    title: str
    culprit: str
    user: dict[str, Any] | None
    tags: list[tuple[str, str]]
    exceptions: list[ExceptionInfo]
    stack_trace: list[Frame]  # the main exception's frames, oldest first
    breadcrumbs: list[dict[str, Any]] = field(default_factory=list)
    request: dict[str, Any] | None = None
    contexts: dict[str, Any] = field(default_factory=dict)
    sdk: dict[str, Any] | None = None
    scrubbed: ScrubRecord = field(default_factory=ScrubRecord)  # which rule filtered what
    extra: dict[str, Any] = field(default_factory=dict)  # "Additional data"

    @property
    def handled(self) -> bool | None:
        """False when an exception of the event was not handled by the application, True
        when every exception says it was, None when the SDK did not say."""
        flags = [x.mechanism.handled for x in self.exceptions if x.mechanism is not None]
        if False in flags:
            return False
        return True if flags and all(flag is True for flag in flags) else None

    @property
    def trace_id(self) -> str | None:
        """The trace the event belongs to (``contexts.trace.trace_id``): its logs share it."""
        trace = self.contexts.get("trace")
        value = trace.get("trace_id") if isinstance(trace, dict) else None
        return value if isinstance(value, str) and value else None


@dataclass(frozen=True)
class TagValue:
    value: str
    count: int


@dataclass(frozen=True)
class TagSummary:
    key: str
    total: int
    top_values: list[TagValue]


@dataclass(frozen=True)
class ErrorDetails:
    error: ErrorSummary
    first_release: str | None
    last_release: str | None
    tags: list[TagSummary]  # over all of the error's events (error_tags)
    daily: list[Bucket]  # 30 daily counts, oldest first, ending today (UTC)
    latest_event: Event | None
    user_report_count: int = 0  # user feedback about the error's events
    environments: list[TagValue] = field(default_factory=list)  # events per environment
    hashes: list[str] = field(default_factory=list)  # grouping hashes merged into this error
    own_hash: str = ""  # the error's own grouping hash (the others can be unmerged)


@dataclass(frozen=True)
class ReleaseHealth:
    release: str
    environment: str
    sessions: int
    crashed: int
    errored: int  # ended with errors or abnormally, but did not crash
    users: int
    crashed_users: int
    crash_free_sessions: float | None  # percent; None without sessions
    crash_free_users: float | None  # percent; None without users


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a keyset-paginated list; cursors are opaque to callers."""

    items: list[T]
    next_cursor: str | None
    prev_cursor: str | None


class ActivityKind(StrEnum):
    """What happened to an error; Sentry's activity types where Sentry has one."""

    NOTE = "note"  # a comment
    SET_RESOLVED = "set_resolved"
    SET_RESOLVED_IN_RELEASE = "set_resolved_in_release"
    SET_RESOLVED_IN_NEXT_RELEASE = "set_resolved_in_next_release"
    SET_UNRESOLVED = "set_unresolved"
    SET_IGNORED = "set_ignored"
    SET_REGRESSION = "set_regression"
    ASSIGNED = "assigned"
    UNASSIGNED = "unassigned"
    MERGE = "merge"
    UNMERGE = "unmerge"
    REVIEWED = "mark_reviewed"
    ISSUE_LINKED = "issue_linked"


@dataclass(frozen=True)
class Activity:
    id: int
    error_id: int
    kind: ActivityKind
    user: UserRef | None  # None: Tracebox itself (the digest)
    created_at: float
    data: dict[str, Any] = field(default_factory=dict)
    text: str | None = None  # a comment's Markdown source
    updated_at: float | None = None


@dataclass(frozen=True)
class StatusChange:
    """A requested status, with how to resolve or until when to ignore (validated)."""

    status: ErrorStatus
    resolution: Resolution = Resolution.NOW
    release: str | None = None  # for Resolution.IN_RELEASE
    ignore_minutes: int | None = None  # ignore for this long
    ignore_until: float | None = None  # ... or until this moment
    ignore_count: int | None = None
    ignore_user_count: int | None = None


class Keep(Enum):
    """A field of an ``ErrorChange`` that stays as it is."""

    KEEP = "keep"


KEEP = Keep.KEEP


@dataclass(frozen=True)
class ErrorChange:
    """One change to one or many errors (the PUT of an error, a bulk action)."""

    status: StatusChange | None = None
    assignee: UserRef | Keep | None = KEEP  # None: unassign
    reviewed: bool = False  # take it out of "for review"

    def is_empty(self) -> bool:
        return self.status is None and self.assignee is KEEP and not self.reviewed


@dataclass(frozen=True)
class BulkResult:
    changed: int  # errors changed
    batches: int  # transactions used
