"""/user, /users (admins) and /personal_access_tokens."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from tracebox.accounts import personal_tokens
from tracebox.accounts import users as user_service
from tracebox.accounts.policy import require_admin
from tracebox.api.context import Ctx, CurrentPrincipal, IdPath
from tracebox.api.pagination import PagingParams, offset_headers
from tracebox.api.problems import CONFLICT_RESPONSE
from tracebox.api.schemas import TokenCreated, TokenIn, TokenOut, UserIn, UserOut
from tracebox.models import MAX_ID
from tracebox.store import accounts, tokens

router = APIRouter(tags=["users and tokens"])


@router.get("/user", response_model=UserOut)
def current_user(principal: CurrentPrincipal) -> UserOut:
    """The user the token belongs to."""
    return UserOut.of(principal.user)


@router.get("/users", response_model=list[UserOut])
def list_users(
    request: Request,
    response: Response,
    ctx: Ctx,
    principal: CurrentPrincipal,
    paging: PagingParams,
) -> list[UserOut]:
    """Every user (admins only)."""
    require_admin(principal)
    with ctx.db.read() as conn:
        total = accounts.count(conn)
        found = accounts.list_page(conn, offset=paging.offset, limit=paging.per_page)
    offset_headers(request, response, paging, total)
    return [UserOut.of(u) for u in found]


@router.post("/users", response_model=UserOut, status_code=201, responses=CONFLICT_RESPONSE)
def create_user(body: UserIn, ctx: Ctx, principal: CurrentPrincipal) -> UserOut:
    """Create a user (admins only)."""
    require_admin(principal)
    with ctx.db.write() as conn:
        user = user_service.create_user(
            conn,
            username=body.username,
            email=body.email,
            name=body.name,
            password=body.password,
            is_admin=body.admin,
        )
    return UserOut.of(user)


@router.get("/personal_access_tokens", response_model=list[TokenOut])
def list_tokens(
    request: Request,
    response: Response,
    ctx: Ctx,
    principal: CurrentPrincipal,
    paging: PagingParams,
    user_id: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None,
) -> list[TokenOut]:
    """Your tokens. Admins see everyone's, or one user's with ``user_id``."""
    if user_id is not None and user_id != principal.user.id:
        require_admin(principal)
    owner = user_id if principal.is_admin else principal.user.id
    with ctx.db.read() as conn:
        total = tokens.count(conn, user_id=owner)
        found = tokens.list_page(conn, user_id=owner, offset=paging.offset, limit=paging.per_page)
    offset_headers(request, response, paging, total)
    now = time.time()
    return [TokenOut.of(t, now) for t in found]


@router.post("/personal_access_tokens", response_model=TokenCreated, status_code=201)
def create_token(body: TokenIn, ctx: Ctx, principal: CurrentPrincipal) -> TokenCreated:
    """Create a token for yourself. ``expires_at`` defaults to, and may be at most, one
    year from today. The response carries the token; it is never shown again."""
    with ctx.db.write() as conn:
        token, secret = personal_tokens.issue(
            conn,
            principal.user.id,
            name=body.name,
            scopes=[s.value for s in body.scopes],
            expires_on=body.expires_at,
        )
    return TokenCreated(**TokenOut.of(token, time.time()).model_dump(), token=secret)


@router.delete("/personal_access_tokens/{token_id}", status_code=204, response_class=Response)
def revoke_token(token_id: IdPath, ctx: Ctx, principal: CurrentPrincipal) -> Response:
    """Revoke a token: your own, or anyone's for admins."""
    with ctx.db.write() as conn:
        personal_tokens.revoke(conn, principal, token_id)
    return Response(status_code=204)
