"""The triage half of ``IntegratedSource``: bulk actions, activity and comments, and the
project's environments and releases. A mixin so that the reading half stays one file."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection

from tracebox.errors import Forbidden, InvalidParameter, NotFound
from tracebox.search import SearchQuery
from tracebox.store import Database, activity, errors_search, seen
from tracebox.store.activity import ActivityRow
from tracebox.store.errors_read import ErrorRow
from tracebox.store.errors_search import SearchScope
from tracebox.tracking import merging, triage
from tracebox.tracking.models import (
    Activity,
    ActivityKind,
    BulkResult,
    ErrorChange,
    UserRef,
)


class IntegratedWorkflow:
    _db: Database
    _project_id: int
    _clock: Callable[[], float]

    def _error(self, conn: Connection, error_id: int) -> ErrorRow:  # IntegratedSource's
        raise NotImplementedError

    # --- bulk -----------------------------------------------------------------------

    def bulk_update(
        self,
        *,
        ids: builtins.list[int] | None,
        query: SearchQuery | None,
        change: ErrorChange,
        actor: UserRef | None,
        viewer: int | None,
        max_errors: int,
        batch_size: int,
    ) -> BulkResult:
        """Apply ``change`` to the errors ``ids``, or to every error matching ``query``,
        ``batch_size`` errors per write transaction; refuse more than ``max_errors``."""
        if change.status is not None:
            triage.validate(change.status)
        if ids is not None:
            return self._bulk_ids(sorted(set(ids)), change, actor, max_errors, batch_size)
        assert query is not None
        scope = SearchScope(self._project_id, viewer, self._clock())
        # The matching ids once, from a snapshot taken now: a change that makes an error
        # stop matching (resolving "is:unresolved") then skips none of the others.
        with self._db.read() as conn:
            matching = errors_search.matching_ids(conn, query, scope, limit=max_errors + 1)
        if len(matching) > max_errors:
            raise InvalidParameter(
                f"query matches more than {max_errors} errors: narrow it, or change them in parts"
            )
        return self._bulk_ids(sorted(matching), change, actor, max_errors, batch_size)

    def _bulk_ids(
        self,
        ids: builtins.list[int],
        change: ErrorChange,
        actor: UserRef | None,
        max_errors: int,
        batch_size: int,
    ) -> BulkResult:
        if len(ids) > max_errors:
            raise InvalidParameter(f"ids: at most {max_errors} errors at once")
        changed = batches = 0
        for start in range(0, len(ids), batch_size):
            with self._db.write() as conn:
                done = triage.apply(
                    conn,
                    self._project_id,
                    ids[start : start + batch_size],
                    change,
                    actor,
                    self._clock(),
                )
            changed += len(done)
            batches += 1
        return BulkResult(changed=changed, batches=batches)

    # --- activity and comments -----------------------------------------------------

    def activity(self, error_id: int) -> builtins.list[Activity]:
        with self._db.read() as conn:
            error_id = self._error(conn, error_id).id
            return [_activity(r) for r in activity.for_error(conn, error_id)]

    def add_comment(self, error_id: int, actor: UserRef, text: str) -> Activity:
        with self._db.write() as conn:
            error_id = self._error(conn, error_id).id
            note_id = activity.add(
                conn,
                self._project_id,
                [error_id],
                ActivityKind.NOTE,
                user_id=actor.id,
                now=self._clock(),
                text=text,
            )
            assert note_id is not None
            return self._note(conn, error_id, note_id)

    def edit_comment(self, error_id: int, comment_id: int, actor: UserRef, text: str) -> Activity:
        """Only its author edits a comment (403 for anyone else)."""
        with self._db.write() as conn:
            note = self._note(conn, error_id, comment_id)
            if note.user is None or note.user.id != actor.id:
                raise Forbidden("")  # only its author edits a comment
            activity.edit_note(conn, comment_id, text, self._clock())
            return self._note(conn, error_id, comment_id)

    def delete_comment(self, error_id: int, comment_id: int) -> None:
        """The caller checks the role (Maintainer+)."""
        with self._db.write() as conn:
            self._note(conn, error_id, comment_id)
            activity.delete(conn, comment_id)

    def _note(self, conn: Connection, error_id: int, comment_id: int) -> Activity:
        error_id = self._error(conn, error_id).id
        row = activity.get(conn, error_id, comment_id)
        if row is None or row.kind != activity.NOTE:
            raise NotFound("Comment")
        return _activity(row)

    # --- merge and unmerge ----------------------------------------------------------

    def merge(
        self,
        error_ids: builtins.list[int],
        actor: UserRef | None,
        *,
        max_errors: int,
        batch_size: int,
    ) -> int:
        """Merge the errors into the one with the most events; its id."""
        return merging.merge(
            self._db,
            self._project_id,
            error_ids,
            actor,
            max_errors=max_errors,
            batch_size=batch_size,
        )

    def unmerge(self, error_id: int, fingerprint: str, actor: UserRef | None) -> int:
        """Split a fingerprint merged into the error off to a new error; its id."""
        with self._db.read() as conn:
            row = self._error(conn, error_id)
        return merging.unmerge(self._db, self._project_id, row, fingerprint, actor)

    # --- environments and releases -----------------------------------------------

    def environments(self) -> builtins.list[str]:
        with self._db.read() as conn:
            return seen.environments(conn, self._project_id)

    def release_names(self) -> builtins.list[str]:
        with self._db.read() as conn:
            return seen.recent_releases(conn, self._project_id)


def _activity(row: ActivityRow) -> Activity:
    user = None
    if row.user_id is not None and row.username is not None:
        user = UserRef(row.user_id, row.username, row.user_name or "", row.user_email or "")
    data: dict[str, Any] = row.data
    return Activity(
        id=row.id,
        error_id=row.error_id,
        kind=ActivityKind(row.kind),
        user=user,
        created_at=row.created_at,
        data=data,
        text=row.text,
        updated_at=row.updated_at,
    )
