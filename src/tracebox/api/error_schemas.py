"""Response bodies of errors, events and release health on /api/v4."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from tracebox.api.timefmt import iso, iso_or_none
from tracebox.tracking.models import (
    Bucket,
    ErrorDetails,
    ErrorSummary,
    Event,
    ExceptionInfo,
    Frame,
    Mechanism,
    ReleaseHealth,
    Resolution,
    StatusDetails,
    TagSummary,
    UserRef,
)


class CountOut(BaseModel):
    time: str  # start of the hour or day, UTC
    count: int

    @classmethod
    def of(cls, b: Bucket) -> CountOut:
        return cls(time=iso(b.time), count=b.count)


class UserRefOut(BaseModel):
    id: int
    username: str
    name: str

    @classmethod
    def of(cls, u: UserRef | None) -> UserRefOut | None:
        return cls(id=u.id, username=u.username, name=u.name) if u else None


class StatusDetailsOut(BaseModel):
    """Why an error is resolved or ignored (Sentry's ``statusDetails``)."""

    resolution: str | None  # now | in_release | in_next_release
    in_release: str | None  # resolved in this release
    in_next_release: bool  # resolved after ``after_release`` (the latest then)
    after_release: str | None
    resolved_at: str | None
    ignore_until: str | None
    ignore_count: int | None  # ... until this many more events
    ignore_user_count: int | None  # ... until this many more users

    @classmethod
    def of(cls, d: StatusDetails) -> StatusDetailsOut:
        in_release = d.resolution is Resolution.IN_RELEASE
        next_release = d.resolution is Resolution.IN_NEXT_RELEASE
        return cls(
            resolution=d.resolution.value if d.resolution else None,
            in_release=d.release if in_release else None,
            in_next_release=next_release,
            after_release=d.release if next_release else None,
            resolved_at=iso_or_none(d.resolved_at),
            ignore_until=iso_or_none(d.ignore_until),
            ignore_count=d.ignore_count,
            ignore_user_count=d.ignore_user_count,
        )


class ErrorOut(BaseModel):
    id: int
    project_id: int
    title: str
    type: str
    value: str
    culprit: str
    status: str
    events_count: int
    users_count: int
    first_seen: str
    last_seen: str
    platform: str
    level: str
    frequency: list[CountOut]  # 24 hourly counts, oldest first
    unhandled: bool = Field(
        description="An event's exception reached no handler in the application "
        "(mechanism.handled false)"
    )
    assignee: UserRefOut | None
    status_details: StatusDetailsOut
    for_review: bool  # new, regressed or unignored in the last 7 days, not yet reviewed
    external_issue_url: str | None = None  # the linked issue (GitLab's "Create issue")

    @classmethod
    def of(cls, e: ErrorSummary) -> ErrorOut:
        return cls(**_summary_fields(e))


def _summary_fields(e: ErrorSummary) -> dict[str, Any]:
    return {
        "id": e.id,
        "project_id": e.project_id,
        "title": e.title,
        "type": e.type,
        "value": e.value,
        "culprit": e.culprit,
        "status": e.status.value,
        "events_count": e.events_count,
        "users_count": e.users_count,
        "first_seen": iso(e.first_seen),
        "last_seen": iso(e.last_seen),
        "platform": e.platform,
        "level": e.level,
        "frequency": [CountOut.of(b) for b in e.frequency],
        "unhandled": e.unhandled,
        "assignee": UserRefOut.of(e.assignee),
        "status_details": StatusDetailsOut.of(e.status_details),
        "for_review": e.in_review,
        "external_issue_url": e.external_issue_url,
    }


class FrameOut(BaseModel):
    filename: str | None
    abs_path: str | None
    function: str | None
    module: str | None
    lineno: int | None
    colno: int | None
    in_app: bool | None
    context: list[tuple[int, str]]  # [line number, source line], around lineno
    symbolicated: bool | None = Field(
        None,
        description="Source maps: true when mapped to the original source, false when "
        "mapping failed (see symbolication_error), null for other frames",
    )
    symbolication_error: str | None = Field(
        None,
        description="no_debug_id, missing_artifact, missing_sourcemap, line_out_of_range "
        "or invalid_sourcemap (docs/sourcemaps.md)",
    )
    symbolication_detail: str | None = None
    vars: dict[str, Any] | None = Field(
        None,
        description="Local variables as the SDK sent them (the Python SDK sends reprs); "
        "values scrubbed by the privacy rules read [Filtered]",
    )

    @classmethod
    def of(cls, f: Frame) -> FrameOut:
        return cls(
            filename=f.filename,
            abs_path=f.abs_path,
            function=f.function,
            module=f.module,
            lineno=f.lineno,
            colno=f.colno,
            in_app=f.in_app,
            context=f.context,
            symbolicated=f.symbolicated,
            symbolication_error=f.mapping_error,
            symbolication_detail=f.mapping_detail,
            vars=f.vars,
        )


class MechanismOut(BaseModel):
    """How the exception was captured (Sentry's ``mechanism``)."""

    type: str
    handled: bool | None = Field(
        None, description="false: the exception reached no handler in the application"
    )
    synthetic: bool
    description: str | None
    help_link: str | None
    exception_id: int | None = Field(None, description="Its id in an exception group's tree")
    parent_id: int | None = Field(None, description="The exception_id of its group")
    is_exception_group: bool
    source: str | None
    data: dict[str, Any] | None
    meta: dict[str, Any] | None

    @classmethod
    def of(cls, m: Mechanism | None) -> MechanismOut | None:
        return None if m is None else cls(**m.__dict__)


class ExceptionOut(BaseModel):
    type: str | None
    value: str | None
    module: str | None
    stack_trace: list[FrameOut]
    raw_stack_trace: list[FrameOut] | None = Field(
        None, description="The minified frames, when source maps mapped the stack trace"
    )
    mechanism: MechanismOut | None = None

    @classmethod
    def of(cls, e: ExceptionInfo) -> ExceptionOut:
        return cls(
            type=e.type,
            value=e.value,
            module=e.module,
            stack_trace=[FrameOut.of(f) for f in e.frames],
            raw_stack_trace=[FrameOut.of(f) for f in e.raw_frames] if e.raw_frames else None,
            mechanism=MechanismOut.of(e.mechanism),
        )


class TagOut(BaseModel):
    key: str
    value: str


class EventOut(BaseModel):
    event_id: str
    error_id: int
    project_id: int
    timestamp: str
    received_at: str
    level: str
    platform: str
    environment: str | None
    release: str | None
    logger: str | None
    title: str
    message: str
    culprit: str
    user: dict[str, Any] | None
    tags: list[TagOut]
    exceptions: list[ExceptionOut]  # oldest first; the main exception is the last
    stack_trace: list[FrameOut]  # the main exception's frames, oldest first
    breadcrumbs: list[dict[str, Any]]
    request: dict[str, Any] | None
    contexts: dict[str, Any]
    sdk: dict[str, Any] | None
    extra: dict[str, Any] = Field(description="Additional data the SDK sent (`extra`)")
    handled: bool | None = Field(
        description="false when an exception of the event reached no handler in the "
        "application; null when the SDK did not say"
    )

    @classmethod
    def of(cls, e: Event) -> EventOut:
        return cls(
            event_id=e.event_id,
            error_id=e.error_id,
            project_id=e.project_id,
            timestamp=iso(e.timestamp),
            received_at=iso(e.received_at),
            level=e.level,
            platform=e.platform,
            environment=e.environment,
            release=e.release,
            logger=e.logger,
            title=e.title,
            message=e.message,
            culprit=e.culprit,
            user=e.user,
            tags=[TagOut(key=k, value=v) for k, v in e.tags],
            exceptions=[ExceptionOut.of(x) for x in e.exceptions],
            stack_trace=[FrameOut.of(f) for f in e.stack_trace],
            breadcrumbs=e.breadcrumbs,
            request=e.request,
            contexts=e.contexts,
            sdk=e.sdk,
            extra=e.extra,
            handled=e.handled,
        )


class TagValueOut(BaseModel):
    value: str
    count: int


class TagSummaryOut(BaseModel):
    key: str
    total: int
    top_values: list[TagValueOut]

    @classmethod
    def of(cls, t: TagSummary) -> TagSummaryOut:
        values = [TagValueOut(value=v.value, count=v.count) for v in t.top_values]
        return cls(key=t.key, total=t.total, top_values=values)


class ErrorDetailsOut(ErrorOut):
    first_release: str | None
    last_release: str | None
    tags: list[TagSummaryOut]  # over all of the error's events
    frequency_30d: list[CountOut]  # 30 daily counts, oldest first, ending today (UTC)
    latest_event: EventOut | None
    # Every event was removed by retention or a deletion; the counts above stay true.
    events_expired: bool
    user_report_count: int = Field(0, description="User feedback about the error's events")
    environments: list[TagValueOut]  # events per environment
    grouping_hashes: list[str]  # the fingerprints grouped here (several after a merge)

    @classmethod
    def of_details(cls, d: ErrorDetails) -> ErrorDetailsOut:
        latest = EventOut.of(d.latest_event) if d.latest_event else None
        return cls(
            **_summary_fields(d.error),
            first_release=d.first_release,
            last_release=d.last_release,
            tags=[TagSummaryOut.of(t) for t in d.tags],
            frequency_30d=[CountOut.of(b) for b in d.daily],
            latest_event=latest,
            events_expired=latest is None and d.error.events_count > 0,
            user_report_count=d.user_report_count,
            environments=[TagValueOut(value=v.value, count=v.count) for v in d.environments],
            grouping_hashes=d.hashes,
        )


class ReleaseOut(BaseModel):
    release: str
    environment: str
    sessions: int
    crashed: int
    errored: int
    users: int
    crashed_users: int
    crash_free_sessions: float | None  # percent
    crash_free_users: float | None  # percent

    @classmethod
    def of(cls, r: ReleaseHealth) -> ReleaseOut:
        return cls(**r.__dict__)
