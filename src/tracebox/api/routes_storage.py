"""Usage, retention, deletions and the audit log (issue 13).

Reading usage: Reporter+. Retention and deletions: Maintainer+ (audited). A deletion
answers 202 with its job: done already when small, otherwise finished by the cleanup
loop within seconds (poll ``GET .../deletions/:id``). Instance storage and the
instance's audit log: admins.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from tracebox.accounts.policy import Principal, require_admin
from tracebox.accounts.projects import ProjectAccess
from tracebox.api.context import Ctx, CurrentPrincipal, ErrorsReader, IdPath, TrackingAdmin
from tracebox.api.storage_schemas import (
    AuditEventOut,
    DeletionOut,
    InstanceStorageOut,
    QuotasIn,
    QuotasOut,
    RetentionIn,
    RetentionOut,
    UsageOut,
    UserDeletionIn,
)
from tracebox.errors import NotFound
from tracebox.lifecycle import deletion as deletions
from tracebox.lifecycle import limits, report
from tracebox.lifecycle import retention as lifecycle_retention
from tracebox.lifecycle.deletion import UserField, user_target
from tracebox.store import audit, deletion, errors_read, quotas
from tracebox.store.audit import Author
from tracebox.store.deletion import JobKind
from tracebox.store.quotas import SpikeProtection

router = APIRouter(tags=["storage: usage, retention, deletion, audit"])
P = "/projects/{id}"
ET = P + "/error_tracking"
BeforeId = Annotated[int | None, Query(ge=1, description="Only events older than this id")]
Limit = Annotated[int, Query(ge=1, le=100, description="How many, newest first")]


def _author(principal: Principal) -> Author:
    return Author(principal.user.id, principal.user.username)


@router.get(P + "/usage", response_model=UsageOut)
def get_usage(access: ErrorsReader, ctx: Ctx) -> UsageOut:
    """Stored items and bytes per kind; events received, accepted, refused, expired and
    deleted by reason over 30 days; items accepted but not kept; retention."""
    return UsageOut.of(report.project(ctx.db, ctx.settings, access.project.id))


@router.get(P + "/retention", response_model=RetentionOut)
def get_retention(access: ErrorsReader, ctx: Ctx) -> RetentionOut:
    return RetentionOut.of(report.project(ctx.db, ctx.settings, access.project.id))


@router.put(P + "/retention", response_model=RetentionOut)
def put_retention(
    body: RetentionIn, access: TrackingAdmin, ctx: Ctx, principal: CurrentPrincipal
) -> RetentionOut:
    """Set the project's maximum event age and events kept per error (Maintainer+);
    ``null`` returns to the instance default. Applied by the next cleanup pass."""
    lifecycle_retention.save(
        ctx.db,
        access.project,
        _author(principal),
        max_age_days=body.max_age_days,
        max_events_per_error=body.max_events_per_error,
    )
    return get_retention(access, ctx)


@router.get(P + "/quotas", response_model=QuotasOut)
def get_quotas(access: TrackingAdmin, ctx: Ctx) -> QuotasOut:
    """The project's quotas and spike protection (Maintainer+)."""
    with ctx.db.read() as conn:
        found = quotas.get(conn, access.project.id)
    return QuotasOut.of(found, limits.spike_refusals(ctx.db, access.project.id))


@router.put(P + "/quotas", response_model=QuotasOut)
def put_quotas(
    body: QuotasIn, access: TrackingAdmin, ctx: Ctx, principal: CurrentPrincipal
) -> QuotasOut:
    """Replace the project's quotas (items of a data category per minute, hour or day,
    for the project or one of its client keys) and spike protection (Maintainer+,
    audited). Ingestion applies them within seconds; over a limit it answers 429 with
    ``Retry-After`` and ``X-Sentry-Rate-Limits`` naming the category."""
    spike = SpikeProtection(body.spike_protection.enabled, body.spike_protection.multiplier)
    saved = limits.save(
        ctx.db, access.project, _author(principal), [q.quota() for q in body.quotas], spike
    )
    return QuotasOut.of(saved, limits.spike_refusals(ctx.db, access.project.id))


@router.delete(ET + "/errors/{error_id}", response_model=DeletionOut, status_code=202)
def delete_error(
    error_id: IdPath, access: TrackingAdmin, ctx: Ctx, principal: CurrentPrincipal
) -> DeletionOut:
    """Delete an error with all its events (Maintainer+, audited). A new event with the
    same fingerprint creates the error anew."""
    with ctx.db.read() as conn:
        found = errors_read.get_error(conn, access.project.id, error_id)
    if found is None:
        raise NotFound("Error")
    job = deletions.delete(
        ctx.db,
        ctx.settings,
        access.project,
        JobKind.ERROR,
        str(error_id),
        _author(principal),
        title=found.title,
        events_count=found.events_count,
    )
    return DeletionOut.of(job)


@router.post(ET + "/user_deletions", response_model=DeletionOut, status_code=202)
def delete_user_events(
    body: UserDeletionIn, access: TrackingAdmin, ctx: Ctx, principal: CurrentPrincipal
) -> DeletionOut:
    """Delete every event of one user in this project, found by the event's user id,
    email (case-insensitive) or IP address (a privacy request; Maintainer+, audited).
    The identifier is not kept once the deletion is done."""
    field, value = next(
        (f, v)
        for f, v in (
            (UserField.ID, body.id),
            (UserField.EMAIL, body.email),
            (UserField.IP_ADDRESS, body.ip_address),
        )
        if v is not None
    )
    target = user_target(field, value)
    job = deletions.delete(
        ctx.db, ctx.settings, access.project, JobKind.USER, target, _author(principal)
    )
    return DeletionOut.of(job)


@router.delete(ET + "/data", response_model=DeletionOut, status_code=202)
def erase_project_data(access: TrackingAdmin, ctx: Ctx, principal: CurrentPrincipal) -> DeletionOut:
    """Delete every error, event and session of the project (Maintainer+, audited). The
    project, its members, client keys and settings stay."""
    job = deletions.delete(
        ctx.db, ctx.settings, access.project, JobKind.PROJECT, "", _author(principal)
    )
    return DeletionOut.of(job)


@router.get(ET + "/deletions", response_model=list[DeletionOut])
def list_deletions(access: TrackingAdmin, ctx: Ctx, limit: Limit = 20) -> list[DeletionOut]:
    with ctx.db.read() as conn:
        return [
            DeletionOut.of(j) for j in deletion.list_for_project(conn, access.project.id, limit)
        ]


@router.get(ET + "/deletions/{deletion_id}", response_model=DeletionOut)
def get_deletion(deletion_id: IdPath, access: TrackingAdmin, ctx: Ctx) -> DeletionOut:
    with ctx.db.read() as conn:
        job = deletion.get(conn, deletion_id)
    if job is None or job.project_id != access.project.id:
        raise NotFound("Deletion")
    return DeletionOut.of(job)


@router.get(P + "/audit_events", response_model=list[AuditEventOut])
def project_audit_events(
    access: TrackingAdmin, ctx: Ctx, before_id: BeforeId = None, limit: Limit = 20
) -> list[AuditEventOut]:
    """The project's audit events, newest first (Maintainer+)."""
    return _audit(ctx, access, before_id, limit)


@router.get("/audit_events", response_model=list[AuditEventOut])
def audit_events(
    ctx: Ctx, principal: CurrentPrincipal, before_id: BeforeId = None, limit: Limit = 20
) -> list[AuditEventOut]:
    """Every audit event of the instance, newest first (admins)."""
    require_admin(principal)
    return _audit(ctx, None, before_id, limit)


def _audit(
    ctx: Ctx, access: ProjectAccess | None, before_id: int | None, limit: int
) -> list[AuditEventOut]:
    project_id = access.project.id if access else None
    with ctx.db.read() as conn:
        found = audit.list_page(conn, project_id=project_id, before_id=before_id, limit=limit)
    return [AuditEventOut.of(e) for e in found]


@router.get("/application/storage", response_model=InstanceStorageOut)
def instance_storage(ctx: Ctx, principal: CurrentPrincipal) -> InstanceStorageOut:
    """The database's size, the disk budget, what is stored and the largest projects
    (admins)."""
    require_admin(principal)
    return InstanceStorageOut.of(report.instance(ctx.db, ctx.settings))
