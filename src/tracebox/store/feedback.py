"""User feedback (``user_reports``): what users wrote, linked to the error of the event
they answered through that event (events are unique per project and event id), so the
link follows the event wherever it is grouped. Feedback outlives its event; once the
event is removed by retention, the feedback is still listed, without its error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Select, and_, exists, func, literal, select, tuple_

from tracebox.store.dialect import insert
from tracebox.store.rows import NewFeedback
from tracebox.store.tables import errors, events, user_reports

Edge = tuple[float, int]  # (created_at, id): keyset position in the newest-first list


@dataclass(frozen=True)
class FeedbackRow:
    id: int
    project_id: int
    event_id: str | None
    name: str
    email: str
    comments: str
    url: str | None
    source: str
    release: str | None
    environment: str | None
    created_at: float
    error_id: int | None  # the error of its event, while that event is stored
    error_title: str | None


def write(conn: Connection, new: Sequence[NewFeedback]) -> int:
    """Store feedback; one already stored (the same feedback id) is skipped. Returns how
    many rows were new."""
    if not new:
        return 0
    rows = [dict(f.__dict__) for f in {(f.project_id, f.feedback_id): f for f in new}.values()]
    stmt = (
        insert(conn, user_reports)
        .on_conflict_do_nothing(index_elements=["project_id", "feedback_id"])
        .returning(user_reports.c.id)
    )
    return len(conn.execute(stmt, rows).all())


def _listing() -> Select[Any]:
    u = user_reports.c
    return select(
        u.id, u.project_id, u.event_id, u.name, u.email, u.comments, u.url, u.source,
        u.release, u.environment, u.created_at, events.c.error_id, errors.c.title,
    ).select_from(
        user_reports.outerjoin(
            events, and_(events.c.project_id == u.project_id, events.c.event_id == u.event_id)
        ).outerjoin(errors, errors.c.id == events.c.error_id)
    )  # fmt: skip


def list_page(
    conn: Connection, project_id: int, *, after: Edge | None, limit: int
) -> list[FeedbackRow]:
    """Up to ``limit`` of the project's feedback, newest first, after the keyset
    position ``after`` (ix_user_reports_created)."""
    u = user_reports.c
    query = _listing().where(u.project_id == project_id)
    if after is not None:
        edge = tuple_(literal(after[0]), literal(after[1]))
        query = query.where(tuple_(u.created_at, u.id) < edge)
    query = query.order_by(u.created_at.desc(), u.id.desc()).limit(limit)
    return [FeedbackRow(*row) for row in conn.execute(query)]


def _of_error(project_id: int, error_id: int) -> Any:
    """Feedback whose event belongs to the error: the project's feedback (few) each
    looked up in the events' unique index."""
    u = user_reports.c
    event = (
        select(literal(1))
        .select_from(events)
        .where(
            events.c.project_id == u.project_id,
            events.c.event_id == u.event_id,
            events.c.error_id == error_id,
        )
        .correlate(user_reports)
    )
    return and_(u.project_id == project_id, u.event_id.is_not(None), exists(event))


def for_error(conn: Connection, project_id: int, error_id: int, limit: int) -> list[FeedbackRow]:
    u = user_reports.c
    query = (
        _listing()
        .where(_of_error(project_id, error_id))
        .order_by(u.created_at.desc(), u.id.desc())
        .limit(limit)
    )
    return [FeedbackRow(*row) for row in conn.execute(query)]


def count_for_error(conn: Connection, project_id: int, error_id: int) -> int:
    query = select(func.count()).select_from(user_reports).where(_of_error(project_id, error_id))
    return int(conn.execute(query).scalar_one())
