"""Links to an issue tracker for an error (pure): a "create issue" URL that opens the
tracker's new-issue form pre-filled with the title, a link back and the top of the
stack trace (no integration credentials needed), and the check of a linked issue's URL."""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

from tracebox.errors import InvalidParameter
from tracebox.tracking.models import ErrorSummary, Event

MAX_URL_CHARS = 2048  # as the gitlab_project_url setting
TOP_FRAMES = 5  # frames of the stack trace quoted in a new issue
MAX_BODY_CHARS = 4000  # browsers and trackers cap URLs near 8 KiB


def checked_url(url: str | None) -> str | None:
    """An http(s) URL to store (None or "" unlinks); 400 otherwise."""
    if not url:
        return None
    url = url.strip()
    parts = urlsplit(url)
    if len(url) > MAX_URL_CHARS or parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidParameter("external_issue_url is invalid: give an http(s) URL")
    if any(c.isspace() or ord(c) < 32 for c in url):
        raise InvalidParameter("external_issue_url is invalid: give an http(s) URL")
    return url


def new_issue_url(tracker: str, error: ErrorSummary, event: Event | None, link: str) -> str:
    """GitHub's or GitLab's new-issue form for ``tracker`` (a repository/project URL)."""
    title = error.title[:255]
    body = _body(error, event, link)[:MAX_BODY_CHARS]
    base = tracker.rstrip("/")
    if urlsplit(base).netloc.lower() in ("github.com", "www.github.com"):
        return f"{base}/issues/new?" + urlencode({"title": title, "body": body})
    return f"{base}/-/issues/new?" + urlencode({"issue[title]": title, "issue[description]": body})


def _body(error: ErrorSummary, event: Event | None, link: str) -> str:
    lines = [
        f"Error: {link}",
        "",
        f"- Events: {error.events_count}, users: {error.users_count}",
        f"- Level: {error.level}, culprit: `{error.culprit or '-'}`",
    ]
    frames = list(reversed(event.stack_trace))[:TOP_FRAMES] if event else []
    if frames:
        lines += ["", "```"]
        lines += [
            f"{f.function or '?'} ({f.filename or f.abs_path or f.module or '?'}"
            + (f":{f.lineno}" if f.lineno is not None else "")
            + ")"
            for f in frames
        ]
        lines.append("```")
    return "\n".join(lines)
