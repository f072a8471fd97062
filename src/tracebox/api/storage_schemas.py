"""Bodies of the storage endpoints: usage, retention, deletions and the audit log."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints, model_validator

from tracebox.api.timefmt import iso, iso_or_none
from tracebox.lifecycle.deletion import MAX_IDENTIFIER_LENGTH
from tracebox.lifecycle.report import InstanceReport, Outcomes, ProjectReport
from tracebox.store.audit import AuditEvent
from tracebox.store.deletion import DeletionJob
from tracebox.store.quotas import ProjectLimits, Quota
from tracebox.store.usage import ProjectUsage, Stored

MAX_RETENTION_DAYS = 3650  # ten years: a bound, not a recommendation
MAX_EVENTS_PER_ERROR = 1_000_000
Identifier = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_IDENTIFIER_LENGTH, pattern=r"^[^\x00]*$")
]


class StoredOut(BaseModel):
    kind: str  # events, attachments, logs, artifacts
    items: int
    bytes: int

    @classmethod
    def of(cls, s: Stored) -> StoredOut:
        return cls(kind=s.kind, items=s.items, bytes=s.bytes)


class OutcomesOut(BaseModel):
    """Error events over the last 30 days; other data categories by outcome:reason."""

    received: int
    accepted: int
    refused: dict[str, int]  # rate_limit, quota, spike_protection, invalid, too_large
    expired: dict[str, int]  # age, count, disk_budget
    deleted: dict[str, int]  # error, user, project
    client_discarded: dict[str, int]  # what SDKs report they dropped, by reason
    other_categories: dict[str, dict[str, int]]

    @classmethod
    def of(cls, o: Outcomes) -> OutcomesOut:
        return cls(
            received=o.received,
            accepted=o.accepted,
            refused=o.refused,
            expired=o.expired,
            deleted=o.deleted,
            client_discarded=o.client_discarded,
            other_categories=o.other_categories,
        )


class DayOut(BaseModel):
    date: str
    accepted: int
    refused: int
    expired: int


class RetentionOut(BaseModel):
    max_age_days: int
    max_events_per_error: int
    max_age_days_is_default: bool
    max_events_per_error_is_default: bool

    @classmethod
    def of(cls, r: ProjectReport) -> RetentionOut:
        return cls(
            max_age_days=r.retention.max_age_days,
            max_events_per_error=r.retention.max_events_per_error,
            max_age_days_is_default=r.own_retention.max_age_days is None,
            max_events_per_error_is_default=r.own_retention.max_events_per_error is None,
        )


class RetentionIn(BaseModel):
    """``null`` (or absent) uses the instance default."""

    max_age_days: Annotated[int | None, Field(ge=1, le=MAX_RETENTION_DAYS)] = None
    max_events_per_error: Annotated[int | None, Field(ge=1, le=MAX_EVENTS_PER_ERROR)] = None


class DictionaryOut(BaseModel):
    version: int
    bytes: int
    samples: int
    plain_bytes: int
    trained_bytes: int
    used: bool
    created_at: str


class UsageOut(BaseModel):
    stored: list[StoredOut]
    last_30_days: OutcomesOut
    daily: list[DayOut]
    not_kept: dict[str, int]  # item types accepted but not stored (transaction, profile...)
    retention: RetentionOut
    dictionary: DictionaryOut | None

    @classmethod
    def of(cls, r: ProjectReport) -> UsageOut:
        d = r.dictionary
        return cls(
            stored=[StoredOut.of(s) for s in r.stored],
            last_30_days=OutcomesOut.of(r.outcomes),
            daily=[
                DayOut(
                    date=iso(x.day)[:10], accepted=x.accepted, refused=x.refused, expired=x.expired
                )
                for x in r.daily
            ],
            not_kept=r.not_kept,
            retention=RetentionOut.of(r),
            dictionary=DictionaryOut(
                version=d.version,
                bytes=d.bytes,
                samples=d.samples,
                plain_bytes=d.plain_bytes,
                trained_bytes=d.trained_bytes,
                used=d.used,
                created_at=iso(d.created_at),
            )
            if d
            else None,
        )


class ProjectUsageOut(BaseModel):
    project_id: int
    path: str
    items: int
    bytes: int

    @classmethod
    def of(cls, u: ProjectUsage) -> ProjectUsageOut:
        return cls(project_id=u.project_id, path=u.path, items=u.items, bytes=u.bytes)


class InstanceStorageOut(BaseModel):
    database_file_bytes: int
    used_bytes: int  # SQLite: pages in use; PostgreSQL: stored bytes (an estimate)
    free_bytes: int  # inside the file, given back by the cleanup loop
    used_bytes_exact: bool
    disk_budget_bytes: int  # TRACEBOX_MAX_DATA_BYTES; 0: no budget
    incremental_vacuum: bool | None  # SQLite only
    stored: list[StoredOut]
    largest_projects: list[ProjectUsageOut]
    last_30_days: OutcomesOut
    default_max_age_days: int
    default_max_events_per_error: int

    @classmethod
    def of(cls, r: InstanceReport) -> InstanceStorageOut:
        return cls(
            database_file_bytes=r.space.file_bytes,
            used_bytes=r.space.used_bytes,
            free_bytes=r.space.free_bytes,
            used_bytes_exact=r.space.exact,
            disk_budget_bytes=r.budget_bytes,
            incremental_vacuum=r.incremental_vacuum,
            stored=[StoredOut.of(s) for s in r.stored],
            largest_projects=[ProjectUsageOut.of(p) for p in r.largest],
            last_30_days=OutcomesOut.of(r.outcomes),
            default_max_age_days=r.defaults.max_age_days,
            default_max_events_per_error=r.defaults.max_events_per_error,
        )


class DeletionOut(BaseModel):
    id: int
    kind: Literal["error", "user", "project"]
    target: str  # the error id; a user's identifier only while the deletion runs
    state: Literal["pending", "done"]
    events_deleted: int
    created_at: str
    finished_at: str | None

    @classmethod
    def of(cls, j: DeletionJob) -> DeletionOut:
        return cls(
            id=j.id,
            kind=j.kind.value,
            target=j.target if j.kind.value != "user" or j.state.value == "done" else "(running)",
            state=j.state.value,
            events_deleted=j.events_deleted,
            created_at=iso(j.created_at),
            finished_at=iso_or_none(j.finished_at),
        )


class UserDeletionIn(BaseModel):
    """Exactly one of ``id``, ``email`` and ``ip_address`` (the event's ``user``)."""

    id: Identifier | None = None
    email: Identifier | None = None
    ip_address: Identifier | None = None

    @model_validator(mode="after")
    def one_identifier(self) -> UserDeletionIn:
        if sum(v is not None for v in (self.id, self.email, self.ip_address)) != 1:
            raise ValueError("give exactly one of id, email and ip_address")
        return self


class AuditEventOut(BaseModel):
    id: int
    created_at: str
    author_id: int | None
    author_name: str
    entity_id: int | None  # the project, as GitLab's audit events
    entity_path: str | None
    action: str
    target: str
    details: dict[str, Any]

    @classmethod
    def of(cls, e: AuditEvent) -> AuditEventOut:
        return cls(
            id=e.id,
            created_at=iso(e.created_at),
            author_id=e.author_id,
            author_name=e.author_name,
            entity_id=e.project_id,
            entity_path=e.project_path,
            action=e.action,
            target=e.target,
            details=e.details,
        )


Category = Literal[
    "default", "error", "session", "attachment", "log_item", "transaction", "profile",
    "replay", "span", "monitor", "internal", "feedback", "security",
]  # fmt: skip
Window = Literal["minute", "hour", "day"]
WINDOW_SECONDS: dict[str, int] = {"minute": 60, "hour": 3600, "day": 86400}
MAX_QUOTA = 10**12


class QuotaBody(BaseModel):
    category: Category = "error"  # Sentry's data category (an event is "error")
    window: Window
    max_count: Annotated[int, Field(ge=0, le=MAX_QUOTA)]  # 0 refuses every item
    key_id: Annotated[int | None, Field(ge=1, le=2**63 - 1)] = None  # None: the whole project

    def quota(self) -> Quota:
        return Quota(self.category, WINDOW_SECONDS[self.window], self.max_count, self.key_id)

    @classmethod
    def of(cls, q: Quota) -> QuotaBody:
        window = next(w for w, s in WINDOW_SECONDS.items() if s == q.window_seconds)
        return cls(category=q.category, window=window, max_count=q.max_count, key_id=q.key_id)  # type: ignore[arg-type]


class SpikeBody(BaseModel):
    enabled: bool = False
    multiplier: Annotated[float, Field(ge=2, le=1000)] = 10.0


class QuotasIn(BaseModel):
    """Replaces every quota of the project; at most 50."""

    quotas: Annotated[list[QuotaBody], Field(max_length=50)] = []
    spike_protection: SpikeBody = SpikeBody()


class QuotasOut(QuotasIn):
    spike_refused_last_hour: int  # events spike protection refused this hour and the last

    @classmethod
    def of(cls, limits: ProjectLimits, refused: int) -> QuotasOut:
        spike = SpikeBody(enabled=limits.spike.enabled, multiplier=limits.spike.multiplier)
        return cls(
            quotas=[QuotaBody.of(q) for q in limits.quotas],
            spike_protection=spike,
            spike_refused_last_hour=refused,
        )
