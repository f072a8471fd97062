"""Who an error can be assigned to: a member of its project who can see errors."""

from __future__ import annotations

from tracebox.accounts.policy import MIN_LEVEL, Action
from tracebox.errors import InvalidParameter
from tracebox.models import AccessLevel, User
from tracebox.store import Database, triage
from tracebox.tracking.models import UserRef


def actor(user: User) -> UserRef:
    return UserRef(id=user.id, username=user.username, name=user.name, email=user.email)


def find(
    db: Database, project_id: int, *, user_id: int | None = None, username: str | None = None
) -> UserRef:
    """The member by id or username; 400 ``<field> is invalid`` if they cannot be
    assigned (not a member, a Guest, blocked, unknown)."""
    field = "assignee_id" if username is None else "assignee"
    with db.read() as conn:
        if username is not None:
            user_id = triage.user_id_by_name(conn, username)
        level = int(MIN_LEVEL[Action.READ_ERRORS])
        row = triage.assignable(conn, project_id, user_id, level) if user_id else None
    if row is None:
        reporter = AccessLevel(level).name.title()
        raise InvalidParameter(f"{field} is invalid: not a {reporter}+ member of this project")
    return UserRef(id=row.id, username=row.username, name=row.name, email=row.email)
