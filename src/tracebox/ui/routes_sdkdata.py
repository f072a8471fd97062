"""Pages of what SDKs send besides errors (issue 12): the log search, the project's user
feedback, and attachment downloads (Reporter+, like errors)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from urllib.parse import urlencode

from starlette.datastructures import QueryParams
from starlette.responses import Response, StreamingResponse

from tracebox.accounts.policy import Action
from tracebox.errors import InvalidParameter
from tracebox.protocol.logs import LEVELS
from tracebox.store import feedback as feedback_store
from tracebox.store import logs as log_store
from tracebox.tracking import attachments as downloads
from tracebox.tracking import cursor as cursors
from tracebox.tracking.models import Bucket
from tracebox.ui import charts
from tracebox.ui.links import project_url
from tracebox.ui.web import Req

LOGS_PER_PAGE = 100
FEEDBACK_PER_PAGE = 50
MAX_TEXT = 255
RANGES = {"1h": 3600, "24h": 86400, "7d": 7 * 86400, "30d": 30 * 86400}  # presets, seconds
DEFAULT_RANGE = "24h"
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class LogQuery:
    """The log search's filters, from the query string; a bad value falls back to its
    default, except a bad cursor (400)."""

    levels: tuple[str, ...] = ()
    text: str = ""
    range: str = DEFAULT_RANGE  # a preset, or "" for the explicit since/until
    since: str = ""  # YYYY-MM-DDTHH:MM (UTC), when range is ""
    until: str = ""
    trace: str = ""
    cursor: str | None = field(default=None, compare=False)

    @classmethod
    def parse(cls, params: QueryParams) -> LogQuery:
        trace = params.get("trace", "").strip().lower()
        since, until = params.get("since", ""), params.get("until", "")
        preset = params.get("range", "")
        if preset not in RANGES:
            preset = "" if since or until or trace else DEFAULT_RANGE
        return cls(
            levels=tuple(level for level in LEVELS if level in params.getlist("level")),
            text=params.get("q", "").replace("\x00", "").strip()[:MAX_TEXT],
            range=preset,
            since=since if _minute(since) is not None else "",
            until=until if _minute(until) is not None else "",
            trace=trace if len(trace) == 32 and _HEX.issuperset(trace) else "",
            cursor=params.get("cursor") or None,
        )

    def bounds(self, now: float) -> tuple[float | None, float | None]:
        if self.range:
            return now - RANGES[self.range], None
        return _minute(self.since), _minute(self.until)

    def url(self, path: str, **changes: object) -> str:
        q = replace(self, **{"cursor": None, **changes})  # type: ignore[arg-type]
        params: list[tuple[str, str]] = [("level", level) for level in q.levels]
        for key, value in (
            ("q", q.text), ("range", q.range), ("since", q.since), ("until", q.until),
            ("trace", q.trace), ("cursor", q.cursor or ""),
        ):  # fmt: skip
            if value:
                params.append((key, value))
        return project_url(path, "logs") + (f"?{urlencode(params)}" if params else "")


def _minute(text: str) -> float | None:
    """Unix seconds of a ``datetime-local`` value, read as UTC."""
    try:
        return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() if text else None
    except ValueError:
        return None


def _after(cursor: str | None) -> tuple[float, int] | None:
    found = cursors.decode(cursor)
    if found is not None and found.is_prev:
        raise InvalidParameter("cursor is invalid")
    return (found.value, found.id) if found else None


def logs_page(r: Req, project: str) -> Response:
    access = r.project(project, Action.READ_ERRORS)
    query = LogQuery.parse(r.request.query_params)
    now = time.time()
    since, until = query.bounds(now)
    hour = int(now // 3600)
    with r.db.read() as conn:
        found = log_store.search(
            conn, access.project.id, levels=query.levels, text=query.text or None,
            trace_id=query.trace or None, since=since, until=until,
            after=_after(query.cursor), limit=LOGS_PER_PAGE + 1,
        )  # fmt: skip
        volume = log_store.hourly(conn, access.project.id, first_hour=hour - 23, last_hour=hour)
        stored, stored_bytes = log_store.usage(conn, access.project.id)
    rows = found[:LOGS_PER_PAGE]
    more = len(found) > LOGS_PER_PAGE
    next_cursor = cursors.Cursor(rows[-1].timestamp, rows[-1].id, False).encode() if more else None
    buckets = [Bucket(float(h * 3600), volume.get(h, 0)) for h in range(hour - 23, hour + 1)]
    return r.render(
        "logs/index.html",
        access=access,
        query=query,
        rows=rows,
        next_url=query.url(access.project.path, cursor=next_cursor) if next_cursor else None,
        levels=LEVELS,
        ranges=RANGES,
        chart=charts.bar_chart(buckets, width=960, height=64, gap=2, noun="record"),
        stored=stored,
        stored_bytes=stored_bytes,
        settings=r.ctx.settings,
    )


def feedback_page(r: Req, project: str) -> Response:
    access = r.project(project, Action.READ_ERRORS)
    cursor = r.query("cursor") or None
    with r.db.read() as conn:
        found = feedback_store.list_page(
            conn, access.project.id, after=_after(cursor), limit=FEEDBACK_PER_PAGE + 1
        )
    reports = found[:FEEDBACK_PER_PAGE]
    next_url = None
    if len(found) > FEEDBACK_PER_PAGE:
        edge = cursors.Cursor(reports[-1].created_at, reports[-1].id, False).encode()
        next_url = (
            project_url(access.project.path, "user_feedback") + "?" + urlencode({"cursor": edge})
        )
    return r.render("feedback/index.html", access=access, reports=reports, next_url=next_url)


def download_attachment(r: Req, project: str, attachment_id: int) -> Response:
    """The file, always as a download (``tracking.attachments``)."""
    access = r.project(project, Action.READ_ERRORS)
    found = downloads.find(r.db, access.project.id, attachment_id)
    return StreamingResponse(
        downloads.stream(r.db, found), headers=downloads.download_headers(found)
    )
