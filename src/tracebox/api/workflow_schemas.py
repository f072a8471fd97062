"""Request and response bodies of triage on /api/v4: status with its conditions,
assignee, review, bulk actions, activity and comments."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints

from tracebox.api.error_schemas import ErrorOut, UserRefOut
from tracebox.api.schemas import NO_NUL
from tracebox.api.timefmt import iso, iso_or_none
from tracebox.errors import InvalidParameter
from tracebox.models import MAX_ID, ErrorStatus
from tracebox.tracking.models import Activity, Resolution, StatusChange

Release = Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=NO_NUL)]
Count = Annotated[int, Field(ge=1, le=10**9)]
MAX_BULK_IDS = 100_000  # a body bound; the bulk setting decides how many are changed


class StatusDetailsIn(BaseModel):
    """How to resolve (one of the first two, else "now") or until when to ignore (any of
    the others; none: forever)."""

    in_release: Release | None = None
    in_next_release: bool = False
    ignore_duration: Annotated[int, Field(ge=1, description="minutes")] | None = None
    ignore_until: dt.datetime | None = None
    ignore_count: Count | None = None
    ignore_user_count: Count | None = None


class ErrorUpdateIn(BaseModel):
    status: ErrorStatus | None = None
    status_details: StatusDetailsIn | None = None
    assignee_id: Annotated[int, Field(ge=1, le=MAX_ID)] | None = Field(
        default=None, description="a member's user id; null unassigns"
    )
    reviewed: bool = Field(default=False, description="take the error out of For review")
    external_issue_url: Annotated[str, StringConstraints(max_length=2048)] | None = Field(
        default=None, description="the issue it is linked to (any tracker); null unlinks"
    )

    def wants_assignee(self) -> bool:
        return "assignee_id" in self.model_fields_set

    def wants_link(self) -> bool:
        return "external_issue_url" in self.model_fields_set

    def status_change(self) -> StatusChange | None:
        if self.status is None:
            if self.status_details is not None:
                raise InvalidParameter("status is missing")
            return None
        d = self.status_details or StatusDetailsIn()
        if d.in_release and d.in_next_release:
            raise InvalidParameter("status_details: in_release or in_next_release, not both")
        resolution = Resolution.NOW
        if d.in_release:
            resolution = Resolution.IN_RELEASE
        elif d.in_next_release:
            resolution = Resolution.IN_NEXT_RELEASE
        until = d.ignore_until
        if until is not None and until.tzinfo is None:
            until = until.replace(tzinfo=dt.UTC)
        return StatusChange(
            status=self.status,
            resolution=resolution,
            release=d.in_release,
            ignore_minutes=d.ignore_duration,
            ignore_until=until.timestamp() if until else None,
            ignore_count=d.ignore_count,
            ignore_user_count=d.ignore_user_count,
        )


class BulkIn(ErrorUpdateIn):
    """Which errors (``ids``, or ``query``: all matching it) and the same fields as the
    update of one error."""

    ids: (
        Annotated[list[Annotated[int, Field(ge=1, le=MAX_ID)]], Field(max_length=MAX_BULK_IDS)]
        | None
    ) = None
    query: Annotated[str, StringConstraints(max_length=4096)] | None = None
    environment: Annotated[str, StringConstraints(max_length=255, pattern=NO_NUL)] | None = None


class AssignedErrorOut(ErrorOut):
    project_path: str


class BulkOut(BaseModel):
    changed: int
    batches: int


class MergeIn(BaseModel):
    ids: Annotated[
        list[Annotated[int, Field(ge=1, le=MAX_ID)]], Field(min_length=2, max_length=MAX_BULK_IDS)
    ]


class UnmergeIn(BaseModel):
    grouping_hash: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32}$")]


class CommentIn(BaseModel):
    body: Annotated[str, StringConstraints(min_length=1, pattern=NO_NUL)]


class ActivityOut(BaseModel):
    id: int
    type: str  # note, set_resolved, set_resolved_in_release, set_regression, assigned, ...
    user: UserRefOut | None  # null: Tracebox itself (a regression, an ignore that ended)
    created_at: str
    updated_at: str | None
    body: str | None  # a comment's Markdown
    data: dict[str, Any]

    @classmethod
    def of(cls, a: Activity) -> ActivityOut:
        return cls(
            id=a.id,
            type=a.kind.value,
            user=UserRefOut.of(a.user),
            created_at=iso(a.created_at),
            updated_at=iso_or_none(a.updated_at),
            body=a.text,
            data=a.data,
        )
