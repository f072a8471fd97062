"""Sentry's ``Link`` header (docs.sentry.io/api/pagination; GitLab pagination_parser.rb).

``<URL>; rel="previous"; results="false"; cursor="0:0:1", <URL>; rel="next";
results="true"; cursor="0:100:0"``: both links are always present and only those with
``results="true"`` lead to data. GitLab's regex wants exactly one space after each ``;``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LINK_PART = re.compile(r'rel="(?P<rel>\w+)";\sresults="(?P<results>\w+)";\scursor="(?P<cursor>.+)"')
MAX_CURSOR_LENGTH = 200


@dataclass(frozen=True)
class Links:
    next_cursor: str | None = None
    prev_cursor: str | None = None


def parse_link_header(header: str | None) -> Links:
    found: dict[str, str] = {}
    for part in (header or "").split(","):
        match = LINK_PART.search(part)
        if match is None or match["results"] != "true":
            continue
        cursor = match["cursor"]
        if len(cursor) <= MAX_CURSOR_LENGTH and cursor.isprintable():
            found[match["rel"]] = cursor
    return Links(next_cursor=found.get("next"), prev_cursor=found.get("previous"))
