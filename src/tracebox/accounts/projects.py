"""Projects as people see them: finding one by id or path under the policy, creating one."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError

from tracebox.accounts.policy import MONITOR_LEVELS, Action, Principal, authorize
from tracebox.errors import Conflict, InvalidParameter
from tracebox.models import MAX_ID, AccessLevel, Project
from tracebox.store import members, projects

SEGMENT = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"
PATH_PATTERN = re.compile(rf"{SEGMENT}(/{SEGMENT})*")
MAX_PATH_LENGTH = 255  # projects.path column
MAX_NAME_LENGTH = 255  # projects.name column


@dataclass(frozen=True)
class ProjectAccess:
    project: Project
    level: AccessLevel  # effective: admins act as Owners


def find(conn: Connection, ref: str) -> Project | None:
    """``ref`` is a numeric id or a full path such as ``acme/web``."""
    if ref.isascii() and ref.isdigit():
        number = int(ref)
        return projects.get(conn, number) if number <= MAX_ID else None
    if len(ref) > MAX_PATH_LENGTH or "\x00" in ref:
        return None
    return projects.get_by_path(conn, ref.strip("/"))


def resolve(conn: Connection, principal: Principal, ref: str, action: Action) -> ProjectAccess:
    """The project ``ref`` if ``principal`` may perform ``action`` on it, else 404/403."""
    project = find(conn, ref)
    level = members.access_level(conn, project.id, principal.user.id) if project else None
    effective = authorize(principal, project, level, action)
    assert project is not None
    return ProjectAccess(project, effective)


def resolve_id(
    conn: Connection, principal: Principal, project_id: int, action: Action
) -> ProjectAccess:
    return resolve(conn, principal, str(project_id), action)


def validate_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > MAX_NAME_LENGTH or "\x00" in name:
        raise InvalidParameter("name is invalid")
    return name


def validate_monitor_level(level: str) -> str:
    if level not in MONITOR_LEVELS:
        raise InvalidParameter("monitor_access_level does not have a valid value")
    return level


def full_path(principal: Principal, name: str, path: str | None) -> str:
    """``path`` with a slash is a full path; without one it goes under the user's
    namespace; absent, it is derived from ``name`` (as GitLab's project path)."""
    if path is None:
        path = re.sub(r"[^a-z0-9_.-]+", "-", name.lower()).strip("-.") or "project"
    if "/" not in path.strip("/"):
        path = f"{principal.user.username}/{path}"
    path = path.strip("/")
    if len(path) > MAX_PATH_LENGTH or not PATH_PATTERN.fullmatch(path):
        raise InvalidParameter("path is invalid")
    return path


def create(
    conn: Connection, principal: Principal, *, name: str, path: str | None, monitor: str
) -> Project:
    """Create a project; its creator becomes its Owner."""
    name = validate_name(name)
    path = full_path(principal, name, path)
    if projects.get_by_path(conn, path) is not None:
        raise Conflict("Project path has already been taken")
    try:
        project = projects.create(conn, path, name)
    except IntegrityError as e:  # a concurrent create won the unique constraint
        raise Conflict("Project path has already been taken") from e
    if monitor != project.monitor_access_level:
        projects.update(conn, project.id, name=None, monitor_access_level=monitor)
        project = Project(project.id, path, name, monitor, project.created_at)
    members.add(conn, project.id, principal.user.id, AccessLevel.OWNER)
    return project
