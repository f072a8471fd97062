"""A project's privacy settings (issue 11): what is scrubbed before events are stored."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field, StringConstraints

from tracebox.api.context import Ctx, TrackingAdmin
from tracebox.privacy import IpMode, PrivacySettings
from tracebox.privacy.settings import MAX_FIELD_NAME_CHARS, MAX_FIELD_NAMES, field_names
from tracebox.store import privacy as privacy_store

router = APIRouter(tags=["privacy"])
PRIVACY = "/projects/{id}/error_tracking/privacy"
FieldName = Annotated[str, StringConstraints(max_length=MAX_FIELD_NAME_CHARS)]
Names = Annotated[list[FieldName], Field(max_length=MAX_FIELD_NAMES)]


class PrivacyOut(BaseModel):
    scrub_data: bool = Field(description="Default rules and additional fields on")
    sensitive_fields: list[str] = Field(description="Additional sensitive field names")
    safe_fields: list[str] = Field(description="Field names never scrubbed")
    ip_mode: Literal["store", "anonymize", "drop"] = Field(
        description="IP addresses in user.ip_address, request.env and forwarding headers"
    )
    drop_user_ip: bool = Field(description="Never store user.ip_address, even if sent")

    @classmethod
    def of(cls, s: PrivacySettings) -> PrivacyOut:
        return cls(
            scrub_data=s.scrub_data,
            sensitive_fields=list(s.sensitive_fields),
            safe_fields=list(s.safe_fields),
            ip_mode=s.ip_mode.value,
            drop_user_ip=s.drop_user_ip,
        )


class PrivacyIn(BaseModel):
    """Attributes to change; those left out keep their value (GitLab's PUT)."""

    scrub_data: bool | None = None
    sensitive_fields: Names | None = None
    safe_fields: Names | None = None
    ip_mode: Literal["store", "anonymize", "drop"] | None = None
    drop_user_ip: bool | None = None


@router.get(PRIVACY, response_model=PrivacyOut)
def get_privacy(access: TrackingAdmin, ctx: Ctx) -> PrivacyOut:
    """The project's privacy settings (the defaults until a Maintainer changes them)."""
    with ctx.db.read() as conn:
        return PrivacyOut.of(privacy_store.get(conn, access.project.id))


@router.put(PRIVACY, response_model=PrivacyOut)
def update_privacy(body: PrivacyIn, access: TrackingAdmin, ctx: Ctx) -> PrivacyOut:
    """Change the settings given; new events are scrubbed with them from the digest's
    next batch on, on every node. Stored events are not changed."""
    with ctx.db.write() as conn:
        saved = privacy_store.get(conn, access.project.id)
        changed = PrivacySettings(
            scrub_data=saved.scrub_data if body.scrub_data is None else body.scrub_data,
            sensitive_fields=_names(
                body.sensitive_fields, saved.sensitive_fields, "sensitive_fields"
            ),
            safe_fields=_names(body.safe_fields, saved.safe_fields, "safe_fields"),
            ip_mode=saved.ip_mode if body.ip_mode is None else IpMode(body.ip_mode),
            drop_user_ip=saved.drop_user_ip if body.drop_user_ip is None else body.drop_user_ip,
        )
        privacy_store.put(conn, access.project.id, changed)
    return PrivacyOut.of(changed)


def _names(given: list[str] | None, saved: tuple[str, ...], setting: str) -> tuple[str, ...]:
    return saved if given is None else field_names(given, setting)
