"""Releases as sentry-cli manages them (create, finalize, rename, deploys, delete), one
row per project under an organization-wide version (no HTTP).

A release deleted here takes its source map artifacts with it (docs/sourcemaps.md).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection

from tracebox.errors import InvalidParameter
from tracebox.models import Project
from tracebox.store import artifacts, releases
from tracebox.store.releases import DeployRow, ReleaseRow

MAX_VERSION_CHARS = 200  # as Sentry's Release.version (and Tracebox's event release)
MAX_ENVIRONMENT_CHARS = 64  # as Sentry's Environment.name
_BAD_VERSION_CHARS = frozenset("\r\n\f\t/\\")  # as Sentry's Release.is_valid_version


@dataclass
class ReleaseView:
    """One version across the projects of an organization that have it."""

    version: str
    rows: list[ReleaseRow]
    projects: list[Project]
    deploys: list[DeployRow] = field(default_factory=list)
    new_groups: int = 0

    @property
    def created_at(self) -> float:
        return min(r.created_at for r in self.rows)

    @property
    def date_released(self) -> float | None:
        done = [r.date_released for r in self.rows if r.date_released is not None]
        return max(done) if done else None

    @property
    def url(self) -> str | None:
        return next((r.url for r in self.rows if r.url), None)


def validate_version(version: Any) -> str:
    if not isinstance(version, str) or not version.strip():
        raise InvalidParameter("version is missing")
    if (
        len(version) > MAX_VERSION_CHARS
        or version in (".", "..")
        or version.lower() == "latest"
        or _BAD_VERSION_CHARS.intersection(version)
        or "\x00" in version
    ):
        raise InvalidParameter(f"version is invalid: {version[:50]!r}")
    return version


def parse_time(value: Any, name: str) -> float | None:
    """An RFC 3339 time (as sentry-cli sends) as unix seconds; None when absent."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 64:
        raise InvalidParameter(f"{name} is invalid")
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as e:
        raise InvalidParameter(f"{name} is invalid") from e
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


def create(
    conn: Connection,
    projects: Sequence[Project],
    version: str,
    *,
    url: str | None,
    date_started: float | None,
    date_released: float | None,
    now: float,
) -> None:
    for p in projects:
        row = releases.ensure(conn, p.id, version, now=now)
        changes = {"url": url, "date_started": date_started, "date_released": date_released}
        releases.update_release(conn, row.id, **{k: v for k, v in changes.items() if v})


def view(conn: Connection, projects: Sequence[Project], version: str) -> ReleaseView | None:
    """The version across ``projects``; None when none of them has it."""
    rows, owners = [], []
    for p in projects:
        row = releases.get(conn, p.id, version)
        if row is not None:
            rows.append(row)
            owners.append(p)
    if not rows:
        return None
    found = ReleaseView(version, rows, owners)
    found.deploys = releases.list_deploys(conn, [r.id for r in rows])
    found.new_groups = sum(
        releases.new_errors_by_release(conn, p.id).get(version, 0) for p in owners
    )
    return found


def list_views(conn: Connection, projects: Sequence[Project], *, limit: int) -> list[ReleaseView]:
    """The versions of ``projects``, newest first."""
    by_id = {p.id: p for p in projects}
    views: dict[str, ReleaseView] = {}
    rows = releases.list_release_rows(conn, list(by_id), limit=limit)
    for row in rows:
        found = views.setdefault(row.version, ReleaseView(row.version, [], []))
        found.rows.append(row)
        found.projects.append(by_id[row.project_id])
    deploys = releases.list_deploys(conn, [r.id for r in rows]) if rows else []
    new_errors = {p: releases.new_errors_by_release(conn, p) for p in {r.project_id for r in rows}}
    for found in views.values():
        ids = {r.id for r in found.rows}
        found.deploys = [d for d in deploys if d.release_id in ids]
        found.new_groups = sum(new_errors[p.id].get(found.version, 0) for p in found.projects)
    return list(views.values())


def update(
    conn: Connection,
    found: ReleaseView,
    *,
    version: str | None,
    url: str | None,
    date_released: float | None,
) -> str:
    """Finalize (``date_released``), set the URL or rename; returns the version now."""
    new_version = version if version and version != found.version else None
    for row in found.rows:
        changes: dict[str, Any] = {}
        if url is not None:
            changes["url"] = url
        if date_released is not None:
            changes["date_released"] = date_released
        if new_version is not None:
            if releases.get(conn, row.project_id, new_version) is not None:
                raise InvalidParameter(f"version {new_version} already exists")
            changes["version"] = new_version
            artifacts.rename_release(conn, row.project_id, found.version, new_version)
        releases.update_release(conn, row.id, **changes)
    return new_version or found.version


def delete(conn: Connection, found: ReleaseView) -> None:
    """The release in every project, with its artifacts and deploys."""
    for row in found.rows:
        artifacts.delete_release_artifacts(conn, row.project_id, found.version)
        releases.delete_release(conn, row.id)


def add_deploy(conn: Connection, found: ReleaseView, body: dict[str, Any], now: float) -> DeployRow:
    environment = body.get("environment")
    if not isinstance(environment, str) or not environment.strip():
        raise InvalidParameter("environment is missing")
    if len(environment) > MAX_ENVIRONMENT_CHARS or "/" in environment:
        raise InvalidParameter("environment is invalid")
    name, url = body.get("name"), body.get("url")
    finished = parse_time(body.get("dateFinished"), "dateFinished") or now
    started = parse_time(body.get("dateStarted"), "dateStarted")
    rows = found.rows
    wanted = body.get("projects")
    if isinstance(wanted, list) and wanted:
        rows = [
            r
            for r, p in zip(found.rows, found.projects, strict=True)
            if p.path.rpartition("/")[2] in wanted
        ]
        if not rows:
            raise InvalidParameter("projects is invalid")
    deploy = None
    for row in rows:
        deploy = releases.add_deploy(
            conn,
            row.id,
            environment=environment,
            name=name if isinstance(name, str) and name else None,
            url=url if isinstance(url, str) and url else None,
            date_started=started,
            date_finished=finished,
        )
    assert deploy is not None
    return deploy


@dataclass
class ReleaseOverview:
    """One row of the releases page: a version, whoever reported it first (sentry-cli,
    an event or a session), with its deploys, artifacts and new errors."""

    version: str
    created_at: float | None = None  # the release record's; None: only events/sessions name it
    date_released: float | None = None
    deploys: list[DeployRow] = field(default_factory=list)
    artifact_files: int = 0
    artifact_bytes: int = 0
    last_upload: float | None = None
    new_errors: int = 0
    environments: list[str] = field(default_factory=list)  # from sessions
    seen: float = 0.0  # newest sign of life, for ordering


def overview(
    conn: Connection, project_id: int, health: Sequence[tuple[str, str, float]]
) -> list[ReleaseOverview]:
    """Every release the project knows of, newest first; ``health`` holds (release,
    environment, last session start) from release health."""
    rows: dict[str, ReleaseOverview] = {}

    def at(version: str) -> ReleaseOverview:
        return rows.setdefault(version, ReleaseOverview(version))

    records = releases.list_release_rows(conn, [project_id], limit=10_000)
    deploys = releases.list_deploys(conn, [r.id for r in records]) if records else []
    for r in records:
        o = at(r.version)
        o.created_at, o.date_released = r.created_at, r.date_released
        o.deploys = [d for d in deploys if d.release_id == r.id]
        o.seen = max(o.seen, r.created_at, *(d.date_finished for d in o.deploys))
    for version, totals in artifacts.release_totals(conn, project_id).items():
        if version:
            o = at(version)
            o.artifact_files, o.artifact_bytes = totals.files, totals.size
            o.last_upload = totals.last_upload
            o.seen = max(o.seen, totals.last_upload)
    for version, n in releases.new_errors_by_release(conn, project_id).items():
        at(version).new_errors = n
    for version, environment, started in health:
        o = at(version)
        o.environments.append(environment)
        o.seen = max(o.seen, started)
    return sorted(rows.values(), key=lambda o: (-o.seen, o.version))
