"""Adding, changing and removing project members under the Owner rules."""

from __future__ import annotations

from sqlalchemy import Connection

from tracebox.accounts.policy import authorize_member_change
from tracebox.accounts.projects import ProjectAccess
from tracebox.errors import BadRequest, Conflict, InvalidParameter, NotFound
from tracebox.models import AccessLevel, Member
from tracebox.store import accounts, members


def access_level(value: int) -> AccessLevel:
    try:
        return AccessLevel(value)
    except ValueError as e:
        raise InvalidParameter("access_level does not have a valid value") from e


def add(conn: Connection, access: ProjectAccess, user_id: int, level: AccessLevel) -> Member:
    authorize_member_change(access.level, None, level)
    if accounts.get(conn, user_id) is None:
        raise NotFound("User")
    if members.get(conn, access.project.id, user_id) is not None:
        raise Conflict("Member already exists")
    members.add(conn, access.project.id, user_id, level)
    return _get(conn, access, user_id)


def update(conn: Connection, access: ProjectAccess, user_id: int, level: AccessLevel) -> Member:
    current = _get(conn, access, user_id)
    authorize_member_change(access.level, current.access_level, level)
    _keep_an_owner(conn, access, current, level)
    members.update(conn, access.project.id, user_id, level)
    return _get(conn, access, user_id)


def remove(conn: Connection, access: ProjectAccess, user_id: int) -> None:
    current = _get(conn, access, user_id)
    authorize_member_change(access.level, current.access_level, None)
    _keep_an_owner(conn, access, current, None)
    members.remove(conn, access.project.id, user_id)


def _get(conn: Connection, access: ProjectAccess, user_id: int) -> Member:
    member = members.get(conn, access.project.id, user_id)
    if member is None:
        raise NotFound("Member")
    return member


def _keep_an_owner(
    conn: Connection, access: ProjectAccess, current: Member, new: AccessLevel | None
) -> None:
    """A project keeps at least one Owner, so someone can always manage it."""
    demoted = current.access_level == AccessLevel.OWNER and new != AccessLevel.OWNER
    if demoted and members.count_owners(conn, access.project.id) <= 1:
        raise BadRequest("a project must keep at least one Owner")
