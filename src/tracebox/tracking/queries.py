"""The list query every surface builds: a search query, or the older ``status`` and
``search`` parameters, with the limits of the settings."""

from __future__ import annotations

from tracebox.config import Settings
from tracebox.errors import InvalidParameter
from tracebox.search import Filter, SearchQuery, parse
from tracebox.tracking.models import StatusFilter

DEFAULT_QUERY = "is:unresolved"  # as Sentry's and GitLab's lists


def parse_query(settings: Settings, text: str) -> SearchQuery:
    return parse(
        text, max_chars=settings.search_max_query_chars, max_terms=settings.search_max_terms
    )


def list_query(
    settings: Settings,
    *,
    query: str | None,
    status: StatusFilter | None = None,
    search: str | None = None,
) -> SearchQuery:
    """``query`` (the search language) or, without it, ``status`` (default unresolved)
    and ``search`` (words in the title, culprit or message)."""
    if query is not None:
        if status is not None or search:
            raise InvalidParameter("query cannot be combined with status or search")
        return parse_query(settings, query)
    found = SearchQuery(text=tuple((search or "").split()))
    status = status or StatusFilter.UNRESOLVED
    return found if status is StatusFilter.ALL else found.plus(Filter("is", status.value))
