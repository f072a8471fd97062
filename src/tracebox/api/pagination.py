"""GitLab's pagination: ``page``/``per_page`` with X-Total, X-Next-Page and Link headers for
small lists, and keyset cursors (``Link: <...cursor=...>; rel="next"``) for errors and events."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Query, Request, Response

DEFAULT_PER_PAGE = 20  # as GitLab
MAX_PER_PAGE = 100  # as GitLab
MAX_PAGE = 1_000_000  # bounds OFFSET; no list here is that long


@dataclass(frozen=True)
class Paging:
    page: int
    per_page: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page


def get_paging(
    page: Annotated[int, Query(ge=1, le=MAX_PAGE, description="Page number")] = 1,
    per_page: Annotated[
        int, Query(ge=1, le=MAX_PER_PAGE, description="Items per page")
    ] = DEFAULT_PER_PAGE,
) -> Paging:
    return Paging(page, per_page)


PagingParams = Annotated[Paging, Depends(get_paging)]
PerPage = Annotated[int, Query(ge=1, le=MAX_PER_PAGE, description="Items per page")]
CursorParam = Annotated[
    str | None, Query(max_length=100, description="Keyset cursor from a Link header")
]


def _link(request: Request, rel: str, **params: str | int) -> str:
    url = request.url.include_query_params(**params)
    return f'<{url}>; rel="{rel}"'


def offset_headers(request: Request, response: Response, paging: Paging, total: int) -> None:
    pages = max(1, -(-total // paging.per_page))
    next_page = paging.page + 1 if paging.page < pages else None
    prev_page = paging.page - 1 if 1 < paging.page <= pages + 1 else None
    per_page = paging.per_page
    links = [
        _link(request, rel, page=n, per_page=per_page)
        for rel, n in (("prev", prev_page), ("next", next_page), ("first", 1), ("last", pages))
        if n is not None
    ]
    response.headers.update(
        {
            "X-Page": str(paging.page),
            "X-Per-Page": str(per_page),
            "X-Total": str(total),
            "X-Total-Pages": str(pages),
            "X-Next-Page": str(next_page or ""),
            "X-Prev-Page": str(prev_page or ""),
            "Link": ", ".join(links),
        }
    )


def keyset_headers(
    request: Request, response: Response, per_page: int, next_c: str | None, prev_c: str | None
) -> None:
    links = [
        _link(request, rel, cursor=c, per_page=per_page)
        for rel, c in (("prev", prev_c), ("next", next_c))
        if c is not None
    ]
    response.headers["X-Per-Page"] = str(per_page)
    if links:
        response.headers["Link"] = ", ".join(links)
