"""Comments as HTML: Markdown rendered by markdown-it-py (CommonMark, raw HTML off),
then cleaned by nh3 (the ammonia sanitiser) against an allow-list, so whatever a comment
holds, only these tags, attributes and link schemes reach the page (contract 4)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import nh3
from markupsafe import Markup

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

TAGS = {
    "p", "br", "hr", "strong", "em", "del", "s", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
URL_SCHEMES = {"http", "https", "mailto"}


@cache
def _parser() -> MarkdownIt:
    # Imported by the first comment rendered: ~2 MB that a web worker holds only once a
    # page has shown one (most of what a worker serves is ingestion).
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    return md.enable(["table", "strikethrough"]).disable("image")


def render(text: str) -> Markup:
    html = _parser().render(text)
    clean = nh3.clean(
        html,
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="nofollow noopener noreferrer",
        strip_comments=True,
    )
    return Markup(clean)
