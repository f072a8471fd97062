"""Messages (log entries and exception values) as grouping components.

Sentry groups a message on its raw template (``"Failed for %s"``) when the SDK sent one,
else on its formatted text with the variable parts replaced by placeholders (reference
section 8, "Message fallback"), and only its first two non-empty lines.
"""

from __future__ import annotations

import re

from tracebox.grouping._fields import Fields, child, text

_LINES = 2

_MONTH = r"(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_WEEKDAY = r"(?i:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?"
_TIME = r"\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:\s?(?i:am|pm))?"
_ZONE = r"(?:\s?(?:Z|[+-]\d{2}:?\d{2}|GMT|UTC))?"
_HEX4 = r"[0-9a-fA-F]{1,4}"
_IPV4 = r"(?:\d{1,3}\.){3}\d{1,3}"
_DATES = (
    rf"\d{{4}}-\d{{2}}-\d{{2}}(?:[T ]{_TIME})?{_ZONE}",  # ISO 8601 / RFC 3339
    rf"(?:{_WEEKDAY}\s+)?\d{{1,2}}\s+{_MONTH}\s+\d{{4}}(?:\s+{_TIME})?{_ZONE}",  # RFC 2822
    rf"\d{{1,2}}/{_MONTH}/\d{{4}}(?::{_TIME})?{_ZONE}",  # access logs
    rf"(?:{_WEEKDAY}\s+)?{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+(?:{_TIME}\s+)?\d{{4}}",
    rf"\d{{1,2}}[/.-]\d{{1,2}}[/.-]\d{{4}}(?:[ T]{_TIME})?",  # 05/01/2024, 01.05.2024
    rf"\d{{4}}/\d{{1,2}}/\d{{1,2}}(?:[ T]{_TIME})?",
    rf"{_TIME}{_ZONE}(?!\d)",  # a time of day alone
)

# One pass, alternatives in priority order: at each position the first alternative that
# matches wins, so the most specific pattern claims the text before a more general one
# (a URL before the IP or number inside it, a UUID before its hex runs, a date before its
# numbers). Matches start only at a word boundary, some only at a token boundary (the
# lookbehinds), which also keeps the scan linear on long tokens.
_PLACEHOLDERS = re.compile(
    # Every alternative starts at a word boundary; saying so once up front lets the scan
    # skip the inside of words without trying each alternative there.
    r"(?<!\w)(?:"
    + "|".join(
        (
            # A URL ends before trailing punctuation: "failed: GET https://a.io/x: timeout".
            r"(?P<url>(?<![\w+.-])[a-zA-Z][a-zA-Z0-9+.-]*://"
            r"[^\s\"'<>()\[\]{}]*[^\s\"'<>()\[\]{}.,:;!?])",
            r"(?P<email>(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+)",
            r"(?P<uuid>[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}(?!\w))",
            rf"(?P<date>(?<![\w.:/-])(?:{'|'.join(_DATES)}))",
            rf"(?P<ip>(?<![\w.]){_IPV4}(?!\d)"
            rf"|(?<![\w:.])(?:{_HEX4}:){{7}}{_HEX4}(?![\w:])"
            rf"|(?<![\w:.])(?=[0-9a-fA-F:.]*\d)(?:{_HEX4}(?::{_HEX4})*)?::"
            rf"(?:(?:{_HEX4}:)*(?:{_IPV4}|{_HEX4}))?(?![\w:]))",
            r"(?P<sha1>[0-9a-fA-F]{40}(?!\w))",
            r"(?P<md5>[0-9a-fA-F]{32}(?!\w))",
            r"(?P<hex>0[xX][0-9a-fA-F]+(?!\w)"
            r"|(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}(?!\w))",
            r"(?P<float>\d+(?:\.\d+(?:[eE][+-]?\d+)?|[eE][+-]?\d+(?!\w)))",
            r"(?P<int>\d+)",
        )
    )
    + ")"
)


def message_components(event: Fields) -> list[str]:
    """``["message", <normalized text>]`` from the log entry, or [] without one.

    The raw template (``logentry.message``) is preferred over the formatted text: it is
    the same for every call of one log statement, whatever the parameters.
    """
    logentry = child(event, "logentry")
    raw = text(logentry, "message") or text(logentry, "formatted")
    normalized = normalize_message(raw) if raw is not None else ""
    return ["message", normalized] if normalized else []


def normalize_message(message: str) -> str:
    """The first two non-empty lines, stripped and joined by a newline, with variable
    parts replaced by ``<email>``, ``<url>``, ``<ip>``, ``<uuid>``, ``<sha1>``, ``<md5>``,
    ``<date>``, ``<hex>``, ``<float>`` and ``<int>``. "" when there is no text."""
    lines: list[str] = []
    for line in message.splitlines():
        stripped = line.strip()
        if stripped:
            lines.append(_PLACEHOLDERS.sub(_placeholder, stripped))
            if len(lines) == _LINES:
                break
    return "\n".join(lines)


def _placeholder(match: re.Match[str]) -> str:
    return f"<{match.lastgroup}>"
