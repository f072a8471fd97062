"""What every API handler needs: the context object and the authentication dependency."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import unquote

from fastapi import Depends, Path, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from tracebox.accounts import auth
from tracebox.accounts import projects as project_access
from tracebox.accounts.policy import Action, Principal, require_scope
from tracebox.accounts.projects import ProjectAccess
from tracebox.config import Settings
from tracebox.models import MAX_ID
from tracebox.store import Database
from tracebox.tracking import ExternalBackend

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True)
class ApiContext:
    settings: Settings
    db: Database
    # Called with a deleted client key's public key. app.py wires it to the ingest key
    # cache, so the DSN stops working at once on this node (api never imports ingest).
    on_key_deleted: Callable[[str], None] = lambda _public_key: None
    # Token cipher, client bounds and answer cache for projects linked to a Sentry server.
    external: ExternalBackend = None  # type: ignore[assignment]  # built from settings

    def __post_init__(self) -> None:
        if self.external is None:
            object.__setattr__(self, "external", ExternalBackend.from_settings(self.settings))


def get_context(request: Request) -> ApiContext:
    ctx: ApiContext = request.app.state.api_context
    return ctx


Ctx = Annotated[ApiContext, Depends(get_context)]

_private_token = APIKeyHeader(
    name="PRIVATE-TOKEN", auto_error=False, description="A personal access token"
)
_bearer = HTTPBearer(auto_error=False, description="A personal access token as a Bearer token")


def get_principal(
    request: Request,
    ctx: Ctx,
    private_token: Annotated[str | None, Security(_private_token)] = None,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)] = None,
) -> Principal:
    """Authenticate the token (401) and check its scope against the method (403)."""
    token = private_token or (bearer.credentials if bearer else None)
    principal = auth.authenticate(ctx.db, token)
    require_scope(principal, write=request.method not in READ_METHODS)
    return principal


CurrentPrincipal = Annotated[Principal, Depends(get_principal)]

ProjectRef = Annotated[
    str,
    Path(
        description="The project's numeric id or its URL-encoded full path (`acme%2Fweb`)",
        min_length=1,
        max_length=765,  # a 255-character path with every slash encoded
    ),
]


def project_for(action: Action) -> Callable[..., ProjectAccess]:
    """A dependency resolving ``{id}`` to a project the principal may ``action`` on."""

    def dependency(id: ProjectRef, ctx: Ctx, principal: CurrentPrincipal) -> ProjectAccess:
        with ctx.db.read() as conn:
            return project_access.resolve(conn, principal, unquote(id), action)

    return dependency


# One annotated dependency per action: a handler names what it needs, the policy decides.
ProjectReader = Annotated[ProjectAccess, Depends(project_for(Action.READ_PROJECT))]
ProjectAdmin = Annotated[ProjectAccess, Depends(project_for(Action.UPDATE_PROJECT))]
MembersReader = Annotated[ProjectAccess, Depends(project_for(Action.READ_MEMBERS))]
MembersAdmin = Annotated[ProjectAccess, Depends(project_for(Action.ADMIN_MEMBERS))]
ErrorsReader = Annotated[ProjectAccess, Depends(project_for(Action.READ_ERRORS))]
ErrorsUpdater = Annotated[ProjectAccess, Depends(project_for(Action.UPDATE_ERROR))]
TrackingAdmin = Annotated[ProjectAccess, Depends(project_for(Action.ADMIN_ERROR_TRACKING))]
Commenter = Annotated[ProjectAccess, Depends(project_for(Action.COMMENT))]
CommentsAdmin = Annotated[ProjectAccess, Depends(project_for(Action.DELETE_COMMENT))]

IdPath = Annotated[int, Path(ge=1, le=MAX_ID)]
