""" "My errors": the errors assigned to a user across the projects they can read.

Only errors stored here: a project linked to a Sentry server keeps its assignments there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from tracebox.accounts.policy import MIN_LEVEL, Action
from tracebox.models import ErrorStatus, Project, User
from tracebox.store import Database, errors_read
from tracebox.store import projects as project_store
from tracebox.tracking import cursor as cursors
from tracebox.tracking.integrated import summaries
from tracebox.tracking.models import ErrorSummary, Page


@dataclass(frozen=True)
class AssignedError:
    project: Project
    error: ErrorSummary


def assigned_to(
    db: Database, user: User, *, status: ErrorStatus | None, cursor: str | None, per_page: int
) -> Page[AssignedError]:
    """Newest first by last seen; keyset pages as the error list's."""
    c = cursors.decode(cursor)
    after = (c.value, c.id) if c and not c.is_prev else None
    before = (c.value, c.id) if c and c.is_prev else None
    min_level = None if user.is_admin else int(MIN_LEVEL[Action.READ_ERRORS])
    with db.read() as conn:
        rows = errors_read.assigned_errors(
            conn,
            user.id,
            status=status.value if status else None,
            min_level=min_level,
            after=after,
            before=before,
            limit=per_page + 1,
        )
        more = len(rows) > per_page
        rows = (rows[1:] if more else rows) if before is not None else rows[:per_page]
        found = summaries(conn, rows, time.time())
        places = {r.project_id: project_store.get(conn, r.project_id) for r in rows}
    items = [
        AssignedError(place, e) for e in found if (place := places.get(e.project_id)) is not None
    ]
    has_next = more if before is None else bool(rows)
    has_prev = (after is not None and bool(rows)) if before is None else more
    next_c = (
        cursors.Cursor(rows[-1].last_seen, rows[-1].id, False).encode()
        if has_next and rows
        else None
    )
    prev_c = (
        cursors.Cursor(rows[0].last_seen, rows[0].id, True).encode() if has_prev and rows else None
    )
    return Page(items, next_c, prev_c)
