"""Request and response bodies of users, tokens, projects, members, keys and settings."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from tracebox.accounts.passwords import MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH
from tracebox.accounts.tokens import expiry_date
from tracebox.accounts.users import EMAIL_PATTERN, USERNAME_PATTERN
from tracebox.api.timefmt import iso, iso_or_none
from tracebox.models import (
    MAX_ID,
    ClientKey,
    ErrorTrackingSettings,
    Member,
    PersonalAccessToken,
    Project,
    Scope,
    User,
)
from tracebox.protocol.dsn import build_dsn

NO_NUL = r"^[^\x00]*$"  # PostgreSQL text cannot hold NUL characters
Name = Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=NO_NUL)]

RoleLevel = Literal[10, 20, 30, 40, 50]
MonitorLevel = Literal["enabled", "disabled"]


class UserOut(BaseModel):
    id: int
    username: str
    name: str
    email: str
    state: Literal["active", "blocked"]
    is_admin: bool
    created_at: str

    @classmethod
    def of(cls, u: User) -> UserOut:
        state: Literal["active", "blocked"] = "blocked" if u.is_blocked else "active"
        return cls(
            id=u.id,
            username=u.username,
            name=u.name,
            email=u.email,
            state=state,
            is_admin=u.is_admin,
            created_at=iso(u.created_at),
        )


class UserIn(BaseModel):
    username: Annotated[str, StringConstraints(pattern=USERNAME_PATTERN.pattern, max_length=255)]
    email: Annotated[str, StringConstraints(pattern=EMAIL_PATTERN.pattern, max_length=255)]
    name: Annotated[str, StringConstraints(max_length=255, pattern=NO_NUL)] = ""
    password: Annotated[
        str, StringConstraints(min_length=MIN_PASSWORD_LENGTH, max_length=MAX_PASSWORD_LENGTH)
    ]
    admin: bool = False


class TokenOut(BaseModel):
    id: int
    name: str
    user_id: int
    scopes: list[Scope]
    active: bool
    revoked: bool
    created_at: str
    last_used_at: str | None
    expires_at: str  # a date, YYYY-MM-DD: the token stops working at its start (UTC)

    @classmethod
    def of(cls, t: PersonalAccessToken, now: float) -> TokenOut:
        return cls(
            id=t.id,
            name=t.name,
            user_id=t.user_id,
            scopes=list(t.scopes),
            active=t.active(now),
            revoked=t.revoked,
            created_at=iso(t.created_at),
            last_used_at=iso_or_none(t.last_used_at),
            expires_at=expiry_date(t.expires_at).isoformat(),
        )


class TokenCreated(TokenOut):
    token: str  # shown once; only its SHA-256 digest is stored


class TokenIn(BaseModel):
    name: Name
    scopes: Annotated[list[Scope], Field(min_length=1, max_length=2)]
    expires_at: dt.date | None = None


class ProjectOut(BaseModel):
    id: int
    name: str
    path: str
    path_with_namespace: str
    namespace: str
    created_at: str
    monitor_access_level: str

    @classmethod
    def of(cls, p: Project) -> ProjectOut:
        namespace, _, path = p.path.rpartition("/")
        return cls(
            id=p.id,
            name=p.name,
            path=path,
            path_with_namespace=p.path,
            namespace=namespace,
            created_at=iso(p.created_at),
            monitor_access_level=p.monitor_access_level,
        )


class ProjectIn(BaseModel):
    name: Name
    path: Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=NO_NUL)] | None = (
        None
    )
    monitor_access_level: MonitorLevel = "enabled"


class ProjectUpdate(BaseModel):
    name: Name | None = None
    monitor_access_level: MonitorLevel | None = None


class MemberOut(BaseModel):
    id: int
    username: str
    name: str
    state: Literal["active", "blocked"]
    access_level: int
    created_at: str

    @classmethod
    def of(cls, m: Member) -> MemberOut:
        user = UserOut.of(m.user)
        return cls(
            id=user.id,
            username=user.username,
            name=user.name,
            state=user.state,
            access_level=int(m.access_level),
            created_at=iso(m.created_at),
        )


class MemberIn(BaseModel):
    user_id: Annotated[int, Field(ge=1, le=MAX_ID)]
    access_level: RoleLevel


class MemberUpdate(BaseModel):
    access_level: RoleLevel


class ClientKeyOut(BaseModel):
    id: int
    active: bool
    public_key: str
    sentry_dsn: str
    # The deprecated DSN form with the secret key (runner integration, spec 1). Client
    # keys are served to Maintainers and above only, so the secret never reaches others.
    sentry_dsn_with_secret: str

    @classmethod
    def of(cls, k: ClientKey, external_url: str) -> ClientKeyOut:
        dsn = build_dsn(external_url, k.public_key, k.project_id)
        secret = build_dsn(external_url, k.public_key, k.project_id, secret_key=k.secret_key)
        return cls(
            id=k.id,
            active=k.active,
            public_key=k.public_key,
            sentry_dsn=dsn,
            sentry_dsn_with_secret=secret,
        )


class SettingsOut(BaseModel):
    active: bool
    project_name: str | None
    sentry_external_url: str | None
    api_url: str | None
    integrated: bool
    # Tracebox's own: GitLab issues linked to errors get their URL under this one.
    gitlab_project_url: str | None = None

    @classmethod
    def of(cls, s: ErrorTrackingSettings) -> SettingsOut:
        external = s.api_url.replace("api/0/projects/", "") if s.api_url else None
        return cls(
            active=s.active,
            project_name=s.project_name,
            sentry_external_url=external,
            api_url=s.api_url,
            integrated=s.integrated,
            gitlab_project_url=s.gitlab_project_url,
        )


class ExternalProjectIn(BaseModel):
    """The Sentry project to link, as projects.json lists it (GitLab's settings form)."""

    slug: Annotated[str, Field(min_length=1, max_length=255)]
    organization_slug: Annotated[str, Field(min_length=1, max_length=255)]
    name: Annotated[str | None, Field(max_length=255)] = None
    organization_name: Annotated[str | None, Field(max_length=255)] = None


class SettingsIn(BaseModel):
    active: bool | None = None
    integrated: bool | None = None
    # The external backend (integrated=false): the Sentry URL, its auth token (write
    # only; a masked "*****" keeps the stored one) and the project to link.
    api_host: Annotated[str | None, Field(max_length=2048)] = None
    token: Annotated[str | None, Field(max_length=512)] = None
    project: ExternalProjectIn | None = None
    # Where the project's GitLab issues live, e.g. https://gitlab.example.com/grp/app
    # (an empty string clears it).
    gitlab_project_url: Annotated[str | None, Field(max_length=2048)] = None
