"""A parsed search query (``tracking.search``) as conditions on the ``errors`` table.

Status, assignee, level, platform, times and counts are columns of ``errors`` (the list
indexes lead with ``project_id, status``); tags, users, releases and environments are
looked up in the tags summary; free text scans the project's titles, culprits and
messages. Every condition is parameterized; nothing of the query is formatted into SQL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Connection, and_, false, func, literal, not_, or_, select

from tracebox.search import Filter, SearchQuery, glob_to_like, time_range
from tracebox.store.tables import error_tags, errors, releases, users
from tracebox.store.triage import FOR_REVIEW_SECONDS

Condition = ColumnElement[bool]


@dataclass(frozen=True)
class SearchScope:
    project_id: int
    viewer_id: int | None  # who "me" is
    now: float


def conditions(query: SearchQuery, scope: SearchScope) -> list[Condition]:
    """One condition per term; all must hold."""
    found = [_filter(f, scope) for f in query.filters]
    found += [_text(t) for t in query.text]
    return found


def matching_ids(
    conn: Connection, query: SearchQuery, scope: SearchScope, *, limit: int
) -> list[int]:
    """Ids of the project's errors matching ``query``, ascending, at most ``limit``."""
    where = [errors.c.project_id == scope.project_id, *conditions(query, scope)]
    found = select(errors.c.id).where(*where).order_by(errors.c.id).limit(limit)
    return [int(r[0]) for r in conn.execute(found)]


def _filter(f: Filter, scope: SearchScope) -> Condition:
    builder = BUILDERS.get(f.key, _tag)
    condition = builder(f, scope)
    # NOT over a NULL (no assignee, not in review) is NULL: count a missing value as false.
    return not_(func.coalesce(condition, false())) if f.negated else condition


def _status(f: Filter, scope: SearchScope) -> Condition:
    value = str(f.value)
    if value in ("unresolved", "resolved", "ignored"):
        return errors.c.status == value
    if value == "assigned":
        return errors.c.assignee_id.is_not(None)
    if value == "unassigned":
        return errors.c.assignee_id.is_(None)
    if value == "linked":
        return errors.c.external_issue_url.is_not(None)
    if value == "unlinked":
        return errors.c.external_issue_url.is_(None)
    if value == "regressed":
        return and_(errors.c.regressed.is_(True), errors.c.status == "unresolved")
    return and_(  # for_review
        errors.c.status == "unresolved", errors.c.inbox_at >= scope.now - FOR_REVIEW_SECONDS
    )


def _assigned(f: Filter, scope: SearchScope) -> Condition:
    if f.value == "me":
        if scope.viewer_id is None:
            return false()
        return errors.c.assignee_id == scope.viewer_id
    user = select(users.c.id).where(users.c.username == str(f.value)).scalar_subquery()
    return errors.c.assignee_id == user


def _column(name: str) -> Callable[[Filter, SearchScope], Condition]:
    def build(f: Filter, _scope: SearchScope) -> Condition:
        return _match(errors.c[name], str(f.value))

    return build


def _match(column: ColumnElement[Any], value: str) -> Condition:
    pattern = glob_to_like(value)
    return column == value if pattern is None else column.like(pattern, escape="\\")


def _time(name: str) -> Callable[[Filter, SearchScope], Condition]:
    def build(f: Filter, scope: SearchScope) -> Condition:
        span = time_range(f, scope.now)
        column = errors.c[name]
        parts = []
        if span.low is not None:
            parts.append(column >= span.low)
        if span.high is not None:
            parts.append(column < span.high)
        return and_(*parts)

    return build


def _times_seen(f: Filter, _scope: SearchScope) -> Condition:
    column, n = errors.c.events_count, int(f.value)  # type: ignore[arg-type]
    ops: dict[str, Condition] = {
        "=": column == n,
        ">": column > n,
        ">=": column >= n,
        "<": column < n,
        "<=": column <= n,
    }
    return ops[f.op]


def _release(f: Filter, scope: SearchScope) -> Condition:
    if f.value == "latest":
        latest = (
            select(releases.c.version)
            .where(releases.c.project_id == scope.project_id)
            .order_by(releases.c.created_at.desc(), releases.c.id.desc())
            .limit(1)
            .scalar_subquery()
        )
        return _tagged("release", error_tags.c.value == latest, scope)
    return _tag(f, scope)


def _tag(f: Filter, scope: SearchScope) -> Condition:
    """Errors with an event carrying tag ``key`` = ``value`` (error_tags, counted by the
    digest: the SDK's tags, and level, environment, release, user.*, browser, os, url)."""
    return _tagged(f.key, _match(error_tags.c.value, str(f.value)), scope)


def _tagged(key: str, value: Condition, scope: SearchScope) -> Condition:
    found = select(error_tags.c.error_id).where(
        error_tags.c.project_id == scope.project_id, error_tags.c.key == key, value
    )  # ix_error_tags_search
    return errors.c.id.in_(found)


def _text(text: str) -> Condition:
    """Case-insensitive substring of the title, culprit or message; ``*`` is a wildcard."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    pattern = "%" + escaped.replace("*", "%") + "%"
    columns = (errors.c.title, errors.c.culprit, errors.c.value)
    return or_(*(c.ilike(literal(pattern), escape="\\") for c in columns))


BUILDERS: dict[str, Callable[[Filter, SearchScope], Condition]] = {
    "is": _status,
    "assigned": _assigned,
    "level": _column("level"),
    "platform": _column("platform"),
    "first-seen": _time("first_seen"),
    "last-seen": _time("last_seen"),
    "times-seen": _times_seen,
    "release": _release,
}
