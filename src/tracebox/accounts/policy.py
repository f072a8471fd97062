"""The permission policy: the one place that says who may do what (no I/O).

GitLab's rules (reference section 1 and 4): read errors, releases and events: Reporter+;
change an error's status, create releases and upload source maps: Developer+; error
tracking settings, client keys, deleting releases and artifacts: Maintainer+. Comments
(issue 15): Reporter+ write and edit their own; Maintainer+ delete. Admins
may do everything. A project the user may not see is reported as not found, never as
forbidden, so private projects stay invisible. A project whose
``monitor_access_level`` is ``disabled`` hides error tracking entirely (404).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from tracebox.accounts import tokens
from tracebox.errors import Forbidden, InsufficientScope, NotFound
from tracebox.models import AccessLevel, Project, Scope, User

MONITOR_DISABLED = "disabled"
MONITOR_LEVELS = ("enabled", "disabled")


class Action(StrEnum):
    READ_PROJECT = "read_project"
    UPDATE_PROJECT = "update_project"
    READ_MEMBERS = "read_members"
    ADMIN_MEMBERS = "admin_members"
    READ_ERRORS = "read_errors"  # errors, events, release health
    UPDATE_ERROR = "update_error"  # an error's status
    ADMIN_ERROR_TRACKING = "admin_error_tracking"  # settings, client keys, alert rules
    READ_ALERT_RULES = "read_alert_rules"  # alert rules: every member sees them (issue 14)
    COMMENT = "comment"  # comment on an error (and edit one's own comments)
    DELETE_COMMENT = "delete_comment"  # anyone's comment
    WRITE_RELEASES = "write_releases"  # releases, deploys, source map uploads (sentry-cli)
    DELETE_RELEASES = "delete_releases"  # a release and its artifacts


MIN_LEVEL: dict[Action, AccessLevel] = {
    Action.READ_PROJECT: AccessLevel.GUEST,
    Action.READ_MEMBERS: AccessLevel.GUEST,
    Action.UPDATE_PROJECT: AccessLevel.MAINTAINER,
    Action.ADMIN_MEMBERS: AccessLevel.MAINTAINER,
    Action.READ_ERRORS: AccessLevel.REPORTER,
    Action.UPDATE_ERROR: AccessLevel.DEVELOPER,
    Action.ADMIN_ERROR_TRACKING: AccessLevel.MAINTAINER,
    Action.COMMENT: AccessLevel.REPORTER,
    Action.DELETE_COMMENT: AccessLevel.MAINTAINER,
    Action.READ_ALERT_RULES: AccessLevel.GUEST,
    Action.WRITE_RELEASES: AccessLevel.DEVELOPER,
    Action.DELETE_RELEASES: AccessLevel.MAINTAINER,
}
ERROR_TRACKING_ACTIONS = frozenset(
    {
        Action.READ_ERRORS,
        Action.UPDATE_ERROR,
        Action.ADMIN_ERROR_TRACKING,
        Action.COMMENT,
        Action.DELETE_COMMENT,
        Action.WRITE_RELEASES,
        Action.DELETE_RELEASES,
        Action.READ_ALERT_RULES,
    }
)


@dataclass(frozen=True)
class Principal:
    """An authenticated user and what their credential allows."""

    user: User
    scopes: tuple[Scope, ...]
    token_id: int | None = None  # None for a UI session

    @property
    def is_admin(self) -> bool:
        return self.user.is_admin


def require_scope(principal: Principal, *, write: bool) -> None:
    """A ``read_api`` token may only read (GitLab: 403 ``insufficient_scope``)."""
    if not tokens.allows(principal.scopes, write=write):
        raise InsufficientScope(Scope.API)


def require_admin(principal: Principal) -> None:
    if not principal.is_admin:
        raise Forbidden("")


def authorize_token(principal: Principal, owner_id: int) -> None:
    """Tokens are managed by their owner and by admins; others' tokens are not found."""
    if owner_id != principal.user.id and not principal.is_admin:
        raise NotFound("Personal Access Token")


def effective_level(principal: Principal, level: AccessLevel | None) -> AccessLevel | None:
    return AccessLevel.OWNER if principal.is_admin else level


def authorize(
    principal: Principal, project: Project | None, level: AccessLevel | None, action: Action
) -> AccessLevel:
    """Return the principal's effective level on ``project``, or raise 404/403."""
    effective = effective_level(principal, level) if project is not None else None
    if project is None or effective is None:
        raise NotFound("Project")
    if action in ERROR_TRACKING_ACTIONS and project.monitor_access_level == MONITOR_DISABLED:
        raise NotFound("")
    if effective < MIN_LEVEL[action]:
        raise Forbidden("")
    return effective


def authorize_member_change(
    actor_level: AccessLevel, old: AccessLevel | None, new: AccessLevel | None
) -> None:
    """Maintainers manage members below Owner; only Owners (and admins, who act as
    Owners) grant, change or remove the Owner role (as GitLab)."""
    touches_owner = AccessLevel.OWNER in (old, new)
    if touches_owner and actor_level < AccessLevel.OWNER:
        raise Forbidden("")


def permits(project: Project, level: AccessLevel, action: Action) -> bool:
    """Whether ``authorize`` lets an effective ``level`` perform ``action`` on ``project``.
    The UI uses it to show only the controls a user may use; handlers still authorize."""
    if action in ERROR_TRACKING_ACTIONS and project.monitor_access_level == MONITOR_DISABLED:
        return False
    return level >= MIN_LEVEL[action]
