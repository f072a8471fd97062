"""Sentry's JSON for what sentry-cli reads: auth info, organizations, projects,
releases, deploys and release files (field names as Sentry spells them)."""

from __future__ import annotations

from typing import Any

from tracebox.accounts.organizations import namespace_of, slug_of
from tracebox.accounts.policy import Principal
from tracebox.api.timefmt import iso_seconds
from tracebox.models import Project, Scope
from tracebox.releases import ReleaseView
from tracebox.store.artifacts import ArtifactFile
from tracebox.store.releases import DeployRow

Json = dict[str, Any]

# Sentry scopes a Tracebox token's scopes stand for (sentry-cli shows them in `info`).
SENTRY_SCOPES = {
    Scope.READ_API: ["org:read", "project:read", "event:read"],
    Scope.API: ["org:read", "project:read", "project:write", "project:releases", "event:read"],
}


def auth_info(principal: Principal | None) -> Json:
    if principal is None:
        return {"version": "0", "auth": None, "user": None}
    scopes = sorted({s for scope in principal.scopes for s in SENTRY_SCOPES.get(scope, [])})
    user = principal.user
    return {
        "version": "0",
        "auth": {"scopes": scopes},
        "user": {
            "id": str(user.id),
            "username": user.username,
            "name": user.name,
            "email": user.email,
            "isSuperuser": user.is_admin,
        },
    }


def organization(namespace: str, projects: list[Project]) -> Json:
    return {
        "id": namespace,
        "slug": namespace,
        "name": namespace,
        "dateCreated": iso_seconds(min(p.created_at for p in projects)),
        "isEarlyAdopter": False,
        "require2FA": False,
        "requireEmailVerification": False,
        "features": [],
        "status": {"id": "active", "name": "active"},
        "links": {"organizationUrl": "", "regionUrl": ""},
    }


def project(p: Project) -> Json:
    return {
        "id": str(p.id),
        "slug": slug_of(p),
        "name": p.name,
        "platform": None,
        "dateCreated": iso_seconds(p.created_at),
        "team": None,
        "teams": [],
        "organization": {"id": namespace_of(p), "slug": namespace_of(p), "name": namespace_of(p)},
    }


def _when(ts: float | None) -> str | None:
    return None if ts is None else iso_seconds(ts)


def deploy(d: DeployRow) -> Json:
    return {
        "id": str(d.id),
        "environment": d.environment,
        "name": d.name,
        "url": d.url,
        "dateStarted": _when(d.date_started),
        "dateFinished": iso_seconds(d.date_finished),
    }


def release(r: ReleaseView) -> Json:
    last = r.deploys[0] if r.deploys else None
    short = r.version.rpartition("@")[2] or r.version
    return {
        "version": r.version,
        "shortVersion": short,
        "ref": None,
        "url": r.url,
        "dateCreated": iso_seconds(r.created_at),
        "dateReleased": _when(r.date_released),
        "dateStarted": _when(min((x.date_started for x in r.rows if x.date_started), default=None)),
        "lastEvent": None,
        "firstEvent": None,
        "newGroups": r.new_groups,
        "status": "open",
        "data": {},
        "commitCount": 0,
        "lastCommit": None,
        "authors": [],
        "deployCount": len(r.deploys),
        "lastDeploy": deploy(last) if last else None,
        "projects": [{"id": str(p.id), "slug": slug_of(p), "name": p.name} for p in r.projects],
    }


def artifact(f: ArtifactFile) -> Json:
    headers: dict[str, str] = {}
    if f.sourcemap:
        headers["Sourcemap"] = f.sourcemap
    if f.debug_id:
        headers["debug-id"] = f.debug_id
    return {
        "id": str(f.id),
        "name": f.url,
        "dist": f.dist or None,
        "headers": headers,
        "size": f.size,
        "sha1": f.checksum,
        "dateCreated": iso_seconds(f.created_at),
    }
