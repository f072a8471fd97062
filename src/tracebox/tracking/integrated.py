"""``IntegratedSource``: the ``ErrorSource`` over this instance's own store."""

from __future__ import annotations

import builtins
import time
from collections import Counter
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy import Connection

from tracebox.errors import NotFound
from tracebox.models import ErrorStatus
from tracebox.search import Filter, SearchQuery
from tracebox.store import Database, activity, errors_read, errors_search, feedback, releases
from tracebox.store import merge as store_merge
from tracebox.store import triage as store_triage
from tracebox.store.errors_read import Edge, ErrorRow, EventRow
from tracebox.store.errors_search import SearchScope
from tracebox.store.triage import FOR_REVIEW_SECONDS, UserRow
from tracebox.tracking import cursor as cursors
from tracebox.tracking import triage
from tracebox.tracking.events import own_summary, to_event
from tracebox.tracking.integrated_workflow import IntegratedWorkflow
from tracebox.tracking.models import (
    ActivityKind,
    Bucket,
    ErrorChange,
    ErrorDetails,
    ErrorSort,
    ErrorSummary,
    Event,
    Page,
    ReleaseHealth,
    Resolution,
    StatusDetails,
    TagSummary,
    TagValue,
    UserRef,
)

HOURS_IN_TIMELINE = 24
DAYS_IN_CHART = 30
TOP_TAG_KEYS = 20
TOP_TAG_VALUES = 5

R = TypeVar("R")
T = TypeVar("T")


class IntegratedSource(IntegratedWorkflow):
    def __init__(self, db: Database, project_id: int, *, clock: Callable[[], float] = time.time):
        self._db = db
        self._project_id = project_id
        self._clock = clock

    def list(
        self,
        *,
        query: SearchQuery,
        sort: ErrorSort,
        cursor: str | None,
        per_page: int,
        environment: str | None = None,
        viewer: int | None = None,
    ) -> Page[ErrorSummary]:
        after, before = _edges(cursor)
        if environment:
            query = query.plus(Filter("environment", environment))
        scope = SearchScope(self._project_id, viewer, self._clock())
        with self._db.read() as conn:
            rows = errors_read.list_errors(
                conn,
                self._project_id,
                status=None,
                search=None,
                sort=sort.value,
                after=after,
                before=before,
                limit=per_page + 1,
                where=errors_search.conditions(query, scope),
            )
            rows, next_edge, prev_edge = _page_edges(rows, per_page, after, before)
            summaries = self._summaries(conn, rows)
        key = _sort_key(sort)
        return _page(summaries, next_edge and key(rows[-1]), prev_edge and key(rows[0]))

    def get(self, error_id: int) -> ErrorDetails:
        with self._db.read() as conn:
            row = self._error(conn, error_id)
            error_id = row.id
            summary = self._summaries(conn, [row])[0]
            daily = self._daily(conn, error_id)
            recent = errors_read.list_events(conn, error_id, after=None, before=None, limit=1)
            tags = errors_read.top_tags(conn, error_id, keys=TOP_TAG_KEYS, values=TOP_TAG_VALUES)
            reports = feedback.count_for_error(conn, self._project_id, error_id)
            environments = errors_read.environment_counts(conn, error_id)
            hashes = store_merge.hashes_of(conn, error_id)
        latest = self._event(row, recent[0]) if recent else None
        return ErrorDetails(
            error=summary,
            first_release=row.first_release,
            last_release=row.last_release,
            tags=[_tag_summary(t) for t in tags],
            daily=daily,
            latest_event=latest,
            user_report_count=reports,
            environments=[TagValue(env, n) for env, n in environments],
            hashes=hashes,
            own_hash=row.grouping_hash,
        )

    def events(
        self, error_id: int, *, cursor: str | None, per_page: int, environment: str | None = None
    ) -> Page[Event]:
        after, before = _edges(cursor)
        with self._db.read() as conn:
            row = self._error(conn, error_id)
            error_id = row.id
            found = errors_read.list_events(
                conn,
                error_id,
                after=after,
                before=before,
                limit=per_page + 1,
                environment=environment,
            )
        found, next_edge, prev_edge = _page_edges(found, per_page, after, before)
        items = [self._event(row, e) for e in found]
        return _page(
            items,
            next_edge and (found[-1].timestamp, found[-1].id),
            prev_edge and (found[0].timestamp, found[0].id),
        )

    def latest_event(self, error_id: int) -> Event:
        with self._db.read() as conn:
            row = self._error(conn, error_id)
            error_id = row.id
            found = errors_read.list_events(conn, error_id, after=None, before=None, limit=1)
        if not found:
            raise NotFound("Event")
        return self._event(row, found[0])

    def event(self, error_id: int, event_id: str) -> Event:
        with self._db.read() as conn:
            row = self._error(conn, error_id)
            error_id = row.id
            found = errors_read.get_event(conn, error_id, event_id.replace("-", "").lower())
        if found is None:
            raise NotFound("Event")
        return self._event(row, found)

    def update(self, error_id: int, change: ErrorChange, actor: UserRef | None) -> ErrorSummary:
        if change.status is not None:
            triage.validate(change.status)
        with self._db.write() as conn:
            error_id = self._error(conn, error_id).id
            triage.apply(conn, self._project_id, [error_id], change, actor, self._clock())
            return self._summaries(conn, [self._error(conn, error_id)])[0]

    def link_issue(
        self, error_id: int, url: str | None, actor: UserRef | None = None
    ) -> ErrorSummary:
        with self._db.write() as conn:
            error_id = self._error(conn, error_id).id
            errors_read.set_external_issue(conn, self._project_id, error_id, url)
            activity.add(
                conn,
                self._project_id,
                [error_id],
                ActivityKind.ISSUE_LINKED,
                user_id=actor.id if actor else None,
                now=self._clock(),
                data={"url": url},
            )
            return self._summaries(conn, [self._error(conn, error_id)])[0]

    def releases(self) -> builtins.list[ReleaseHealth]:
        with self._db.read() as conn:
            counts = releases.release_counts(conn, self._project_id)
        return [
            ReleaseHealth(
                release=c.release,
                environment=c.environment,
                sessions=c.sessions,
                crashed=c.crashed,
                errored=c.errored,
                users=c.users,
                crashed_users=c.crashed_users,
                crash_free_sessions=_percent_free(c.crashed, c.sessions),
                crash_free_users=_percent_free(c.crashed_users, c.users),
            )
            for c in counts
        ]

    # --- helpers -------------------------------------------------------------------------

    def _error(self, conn: Connection, error_id: int) -> ErrorRow:
        """The error, or the one it was merged into (its old id keeps working)."""
        row = errors_read.get_error(conn, self._project_id, error_id)
        if row is None:
            merged_into = store_merge.resolve_redirect(conn, self._project_id, error_id)
            if merged_into is not None:
                row = errors_read.get_error(conn, self._project_id, merged_into)
        if row is None:
            raise NotFound("Error")
        return row

    def _summaries(
        self, conn: Connection, rows: builtins.list[ErrorRow]
    ) -> builtins.list[ErrorSummary]:
        return summaries(conn, rows, self._clock())

    def _daily(self, conn: Connection, error_id: int) -> builtins.list[Bucket]:
        today = int(self._clock() // 86400)
        first_day = today - DAYS_IN_CHART + 1
        hours = errors_read.hourly_counts(
            conn, [error_id], first_hour=first_day * 24, last_hour=today * 24 + 23
        ).get(error_id, {})
        per_day = Counter[int]()
        for hour, n in hours.items():
            per_day[hour // 24] += n
        return [Bucket(float(d * 86400), per_day[d]) for d in range(first_day, today + 1)]

    def _event(self, row: ErrorRow, event: EventRow) -> Event:
        """The event with its own title and culprit (an error keeps its latest event's;
        an older event of the error may have said something else)."""
        own = own_summary(event.payload)
        return to_event(
            event.payload,
            error_id=row.id,
            project_id=row.project_id,
            title=own.title if own else row.title,
            culprit=(own.culprit or "") if own else row.culprit,
            received_at=event.received_at,
        )


def summaries(conn: Connection, rows: list[ErrorRow], now: float) -> list[ErrorSummary]:
    """Rows plus their 24 hourly counts, assignees and whether an event went unhandled,
    one query each for a whole page."""
    last = int(now // 3600)
    first = last - HOURS_IN_TIMELINE + 1
    ids = [r.id for r in rows]
    counts = errors_read.hourly_counts(conn, ids, first_hour=first, last_hour=last)
    people = store_triage.user_rows(conn, [r.assignee_id for r in rows if r.assignee_id])
    unhandled = errors_read.unhandled_errors(conn, ids)
    return [
        _summary(
            r,
            counts.get(r.id, {}),
            first,
            last,
            people.get(r.assignee_id or 0),
            now,
            unhandled=r.id in unhandled,
        )
        for r in rows
    ]


def _summary(
    row: ErrorRow,
    hours: dict[int, int],
    first: int,
    last: int,
    assignee: UserRow | None,
    now: float,
    *,
    unhandled: bool,
) -> ErrorSummary:
    return ErrorSummary(
        id=row.id,
        project_id=row.project_id,
        title=row.title,
        type=row.type,
        value=row.value,
        culprit=row.culprit,
        status=ErrorStatus(row.status),
        events_count=row.events_count,
        users_count=row.users_count,
        first_seen=row.first_seen,
        last_seen=row.last_seen,
        platform=row.platform,
        level=row.level,
        frequency=[Bucket(float(h * 3600), hours.get(h, 0)) for h in range(first, last + 1)],
        regressed=bool(row.regressed),
        unhandled=unhandled,
        external_issue_url=row.external_issue_url,
        assignee=triage.user_ref(assignee) if assignee else None,
        status_details=_status_details(row),
        in_review=row.status == "unresolved"
        and row.inbox_at is not None
        and row.inbox_at >= now - FOR_REVIEW_SECONDS,
    )


def _status_details(row: ErrorRow) -> StatusDetails:
    return StatusDetails(
        resolution=Resolution(row.resolution) if row.resolution else None,
        release=row.resolved_release,
        resolved_at=row.resolved_at,
        ignore_until=row.ignore_until,
        ignore_count=row.ignore_count,
        ignore_user_count=row.ignore_user_count,
    )


def _edges(text: str | None) -> tuple[Edge | None, Edge | None]:
    c = cursors.decode(text)
    if c is None:
        return None, None
    return (None, (c.value, c.id)) if c.is_prev else ((c.value, c.id), None)


def _page_edges(
    rows: list[R], per_page: int, after: Edge | None, before: Edge | None
) -> tuple[list[R], bool, bool]:
    """Trim the extra row fetched to learn whether another page exists; say whether
    there is a next and a previous page."""
    more = len(rows) > per_page
    if before is not None:  # walking backwards: the extra row is the oldest-first head
        return (rows[1:] if more else rows), bool(rows), more
    return rows[:per_page], more, after is not None and bool(rows)


def _sort_key(sort: ErrorSort) -> Callable[[ErrorRow], Edge]:
    if sort is ErrorSort.FIRST_SEEN:
        return lambda r: (r.first_seen, r.id)
    if sort is ErrorSort.FREQUENCY:
        return lambda r: (float(r.events_count), r.id)
    return lambda r: (r.last_seen, r.id)


def _page(items: list[T], next_edge: Edge | bool, prev_edge: Edge | bool) -> Page[T]:
    def encode(edge: Edge | bool, is_prev: bool) -> str | None:
        if not isinstance(edge, tuple):
            return None
        return cursors.Cursor(edge[0], edge[1], is_prev).encode()

    return Page(items, encode(next_edge, False), encode(prev_edge, True))


def _percent_free(bad: int, total: int) -> float | None:
    return round(100.0 * (1 - bad / total), 4) if total else None


def _tag_summary(t: errors_read.TagCounts) -> TagSummary:
    return TagSummary(t.key, t.total, [TagValue(v, n) for v, n in t.top_values])
