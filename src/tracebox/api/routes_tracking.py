"""Client keys (spec 4.1) and error tracking settings, exactly as GitLab's (Maintainer+)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query, Request, Response

from tracebox.api.context import ApiContext, Ctx, IdPath, TrackingAdmin
from tracebox.api.pagination import PagingParams, offset_headers
from tracebox.api.schemas import ClientKeyOut, SettingsIn, SettingsOut
from tracebox.errors import InvalidParameter, NotFound
from tracebox.store import client_keys
from tracebox.tracking import external
from tracebox.tracking import settings as tracking_settings

router = APIRouter(tags=["error tracking settings and client keys"])
KEYS = "/projects/{id}/error_tracking/client_keys"
SETTINGS = "/projects/{id}/error_tracking/settings"
BoolQuery = Annotated[bool | None, Query(description="May also be sent in a JSON body")]


@router.get(KEYS, response_model=list[ClientKeyOut])
def list_client_keys(
    request: Request, response: Response, access: TrackingAdmin, ctx: Ctx, paging: PagingParams
) -> list[ClientKeyOut]:
    project_id = access.project.id
    with ctx.db.read() as conn:
        total = client_keys.count_for_project(conn, project_id)
        keys = client_keys.list_page(conn, project_id, offset=paging.offset, limit=paging.per_page)
    offset_headers(request, response, paging, total)
    return [ClientKeyOut.of(k, ctx.settings.external_url) for k in keys]


@router.post(KEYS, response_model=ClientKeyOut, status_code=201)
def create_client_key(access: TrackingAdmin, ctx: Ctx) -> ClientKeyOut:
    """A new active key; its DSN works at once. No body."""
    with ctx.db.write() as conn:
        key = client_keys.create(conn, access.project.id)
    return ClientKeyOut.of(key, ctx.settings.external_url)


@router.delete(KEYS + "/{key_id}", response_model=ClientKeyOut)
def delete_client_key(key_id: IdPath, access: TrackingAdmin, ctx: Ctx) -> ClientKeyOut:
    """Delete a key and return it. Its DSN stops working at once on the node that served
    this request, and on every other node within TRACEBOX_KEY_CACHE_SECONDS."""
    with ctx.db.write() as conn:
        key = client_keys.delete(conn, access.project.id, key_id)
    if key is None:
        raise NotFound("Client Key")
    ctx.on_key_deleted(key.public_key)
    return ClientKeyOut.of(key, ctx.settings.external_url)


@router.get(SETTINGS, response_model=SettingsOut)
def get_settings(access: TrackingAdmin, ctx: Ctx) -> SettingsOut:
    with ctx.db.read() as conn:
        return SettingsOut.of(tracking_settings.get(conn, access.project.id))


def _merged(body: SettingsIn | None, active: bool | None, integrated: bool | None) -> SettingsIn:
    """GitLab reads these from the query string or the body; the body wins."""
    query = {"active": active, "integrated": integrated}
    given = body.model_dump(exclude_none=True) if body is not None else {}
    return SettingsIn.model_validate({**query, **given})


@router.patch(SETTINGS, response_model=SettingsOut)
def update_settings(
    access: TrackingAdmin,
    ctx: Ctx,
    active: BoolQuery = None,
    integrated: BoolQuery = None,
    body: Annotated[SettingsIn | None, Body()] = None,
) -> SettingsOut:
    """Change settings that exist (404 otherwise); ``active`` is required."""
    params = _merged(body, active, integrated)
    if params.active is None:
        raise InvalidParameter("active is missing")
    return _save(ctx, access.project.id, params, create=False)


@router.put(SETTINGS, response_model=SettingsOut)
def put_settings(
    access: TrackingAdmin,
    ctx: Ctx,
    active: BoolQuery = None,
    integrated: BoolQuery = None,
    body: Annotated[SettingsIn | None, Body()] = None,
) -> SettingsOut:
    """Create or replace settings; ``active`` and ``integrated`` are required."""
    params = _merged(body, active, integrated)
    for name in ("active", "integrated"):
        if getattr(params, name) is None:
            raise InvalidParameter(f"{name} is missing")
    return _save(ctx, access.project.id, params, create=True)


def _save(ctx: ApiContext, project_id: int, params: SettingsIn, *, create: bool) -> SettingsOut:
    """PATCH (create=False) and PUT (create=True) share this: link or save, then answer."""
    assert params.active is not None
    if params.integrated is False and params.api_host is not None:
        return _link_external(ctx, project_id, params, create=create)
    with ctx.db.write() as conn:
        saved = tracking_settings.save(
            conn, project_id, active=params.active, integrated=params.integrated, create=create
        )
        if params.gitlab_project_url is not None:
            tracking_settings.set_gitlab_project_url(conn, project_id, params.gitlab_project_url)
            saved = tracking_settings.get(conn, project_id)
    return SettingsOut.of(saved)


def _link_external(
    ctx: ApiContext, project_id: int, params: SettingsIn, *, create: bool
) -> SettingsOut:
    """Check the connection and link the chosen Sentry project (the token is stored
    encrypted and never returned)."""
    if params.project is None:
        raise InvalidParameter("project is missing")
    assert params.api_host is not None and params.active is not None
    if not create:
        tracking_settings.get_existing(ctx.db, project_id)
    external.link(
        ctx.db,
        ctx.external,
        project_id,
        active=params.active,
        api_host=params.api_host,
        token=params.token,
        organization_slug=params.project.organization_slug,
        project_slug=params.project.slug,
    )
    with ctx.db.read() as conn:
        return SettingsOut.of(tracking_settings.get(conn, project_id))
