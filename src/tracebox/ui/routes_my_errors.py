""" "My errors": the errors assigned to the signed-in user, across projects."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.responses import Response

from tracebox.errors import BadRequest
from tracebox.tracking.assigned import assigned_to
from tracebox.tracking.cursor import MAX_CURSOR_LENGTH
from tracebox.tracking.models import StatusFilter
from tracebox.ui.web import Req

PER_PAGE = 20
PATH = "/dashboard/errors"


def my_errors(r: Req) -> Response:
    raw = r.query("status", "unresolved")
    status = StatusFilter(raw) if raw in set(StatusFilter) else StatusFilter.UNRESOLVED
    cursor = r.query("cursor") or None
    if cursor is not None and len(cursor) > MAX_CURSOR_LENGTH:
        raise BadRequest("cursor is invalid")
    page = assigned_to(
        r.db, r.principal.user, status=status.status(), cursor=cursor, per_page=PER_PAGE
    )
    return r.render(
        "errors/mine.html",
        page=page,
        chosen=status,
        statuses=list(StatusFilter),
        page_url=lambda **q: PATH + "?" + urlencode({"status": status.value, **q}),
    )
