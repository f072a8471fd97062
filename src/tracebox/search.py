"""The error search language, parsed once for the UI, ``/api/v4`` and ``/api/0`` (pure).

It sits on the bottom floor (no imports from above) because both ``tracking`` (which
parses) and ``store.errors_search`` (which turns a query into SQL) use its records.

Sentry's issue search, in a lighter form::

    is:unresolved level:error release:1.4.2 user.email:a@b.c browser:Firefox "timed out"
    !environment:staging first-seen:-24h times-seen:>100 url:*checkout*

A query is terms separated by whitespace, all of which must hold (AND). A term is
``key:value`` (a filter), ``!key:value`` (a negated filter) or free text (a word or a
``"quoted phrase"``, matched in the title, culprit and message). Values may be quoted
(``"a b"``, with ``\\"`` and ``\\\\`` inside); ``*`` in a text value is a wildcard. Keys
other than the known ones below are tags (``browser``, ``os``, ``url``, custom tags).

``parse`` returns a ``SearchQuery`` or raises ``QuerySyntaxError`` saying at which
position what was expected; ``SearchQuery.format()`` writes it back, so that
``parse(q.format()) == q`` (tested with hypothesis), and ``to_sentry()`` spells it as a
Sentry server expects (``firstSeen``, ``timesSeen``...).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field, replace
from enum import StrEnum

from tracebox.errors import InvalidParameter
from tracebox.models import MAX_ID


class Kind(StrEnum):
    STATUS = "status"  # is:
    ASSIGNED = "assigned"  # me or a username
    LEVEL = "level"
    TEXT = "text"  # an exact value (tags, release, environment, platform, user.*)
    TIME = "time"  # first-seen, last-seen
    COUNT = "count"  # times-seen


STATUSES = (
    "unresolved",
    "resolved",
    "ignored",
    "assigned",
    "unassigned",
    "regressed",
    "for_review",
)
LEVELS = ("fatal", "error", "warning", "info", "debug")
TIME_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
OPERATORS = (">=", "<=", ">", "<", "=")

KEYS: dict[str, Kind] = {
    "is": Kind.STATUS,
    "assigned": Kind.ASSIGNED,
    "level": Kind.LEVEL,
    "release": Kind.TEXT,
    "environment": Kind.TEXT,
    "platform": Kind.TEXT,
    "first-seen": Kind.TIME,
    "last-seen": Kind.TIME,
    "times-seen": Kind.COUNT,
}
# Sentry's spellings, accepted and written back in ours.
ALIASES = {
    "firstSeen": "first-seen",
    "first_seen": "first-seen",
    "age": "first-seen",
    "lastSeen": "last-seen",
    "last_seen": "last-seen",
    "timesSeen": "times-seen",
    "times_seen": "times-seen",
    "assigned_to": "assigned",
    "assignee": "assigned",
}
STATUS_ALIASES = {"archived": "ignored", "for-review": "for_review", "forReview": "for_review"}
SENTRY_KEYS = {"first-seen": "firstSeen", "last-seen": "lastSeen", "times-seen": "timesSeen"}

KEY_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")  # as Sentry's tag keys
MAX_KEY_CHARS = 200  # Sentry's tag key limit
MAX_COUNT = MAX_ID  # times_seen is a BIGINT column, as the ids are
RELATIVE = re.compile(r"([+-])(\d{1,9})([smhdw])")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?")


class QuerySyntaxError(InvalidParameter):
    """A query that does not parse: ``position`` (0-based) and what was ``expected``."""

    def __init__(self, query: str, position: int, expected: str) -> None:
        super().__init__(f"query is invalid at position {position + 1}: {expected}")
        self.query = query
        self.position = position
        self.expected = expected


@dataclass(frozen=True)
class RelativeTime:
    """``-24h``: within the last 24 hours; ``+7d``: more than 7 days ago."""

    sign: str  # "-" or "+"
    amount: int
    unit: str  # s m h d w

    @property
    def seconds(self) -> int:
        return self.amount * TIME_UNITS[self.unit]

    def text(self) -> str:
        return f"{self.sign}{self.amount}{self.unit}"


@dataclass(frozen=True)
class AbsoluteTime:
    """A date (the whole UTC day unless an operator is given) or a moment, in UTC."""

    timestamp: float  # unix seconds, UTC
    date_only: bool

    def text(self) -> str:
        moment = dt.datetime.fromtimestamp(self.timestamp, dt.UTC)
        if self.date_only:
            return moment.strftime("%Y-%m-%d")
        if moment.microsecond:
            return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


Value = str | int | RelativeTime | AbsoluteTime


@dataclass(frozen=True)
class Filter:
    key: str  # canonical (``first-seen``, not ``firstSeen``); any other key is a tag
    value: Value
    op: str = "="  # for counts and absolute times: = > >= < <=
    negated: bool = False

    @property
    def kind(self) -> Kind:
        return KEYS.get(self.key, Kind.TEXT)

    def format(self, key: str | None = None) -> str:
        bang = "!" if self.negated else ""
        op = "" if self.op == "=" else self.op
        if isinstance(self.value, RelativeTime | AbsoluteTime):
            text = self.value.text()
        elif isinstance(self.value, int):
            text = str(self.value)
        else:
            text = quote(self.value)
        return f"{bang}{key or self.key}:{op}{text}"


@dataclass(frozen=True)
class SearchQuery:
    filters: tuple[Filter, ...] = ()
    text: tuple[str, ...] = ()  # free-text words and phrases, each matched on its own

    def format(self) -> str:
        return " ".join([*(f.format() for f in self.filters), *(quote(t) for t in self.text)])

    def to_sentry(self) -> str:
        """The same query in Sentry's spelling (for a linked Sentry server)."""
        parts = [f.format(SENTRY_KEYS.get(f.key)) for f in self.filters]
        return " ".join([*parts, *(quote(t) for t in self.text)])

    def statuses(self) -> set[str]:
        return {str(f.value) for f in self.filters if f.key == "is" and not f.negated}

    def has_status(self) -> bool:
        """Whether the query says which statuses it wants (else callers add a default)."""
        wanted = {"unresolved", "resolved", "ignored", "for_review"}
        return any(f.key == "is" and f.value in wanted for f in self.filters)

    def plus(self, *filters: Filter) -> SearchQuery:
        return replace(self, filters=(*self.filters, *filters))

    def without(self, key: str) -> SearchQuery:
        return replace(self, filters=tuple(f for f in self.filters if f.key != key))

    def __bool__(self) -> bool:
        return bool(self.filters or self.text)


def quote(value: str) -> str:
    """A value as it must be written: bare when it can be, else in double quotes."""
    bare = value and not any(c.isspace() or c in '"\\' for c in value)
    if bare and not value.startswith(("!", "(", ")")) and not _looks_like_filter(value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _looks_like_filter(word: str) -> bool:
    key, colon, _ = word.partition(":")
    return bool(colon) and KEY_PATTERN.fullmatch(key) is not None


@dataclass
class _Scanner:
    query: str
    pos: int = 0
    terms: list[Filter | str] = field(default_factory=list)

    def fail(self, expected: str, at: int | None = None) -> QuerySyntaxError:
        return QuerySyntaxError(self.query, self.pos if at is None else at, expected)

    def skip_space(self) -> None:
        while self.pos < len(self.query) and self.query[self.pos].isspace():
            self.pos += 1

    def at_end(self) -> bool:
        return self.pos >= len(self.query)

    def quoted(self) -> str:
        """A double-quoted string starting at ``pos``; ``\\"`` and ``\\\\`` are escapes."""
        start, out = self.pos, []
        self.pos += 1
        while self.pos < len(self.query):
            c = self.query[self.pos]
            if c == "\\" and self.pos + 1 < len(self.query) and self.query[self.pos + 1] in '"\\':
                out.append(self.query[self.pos + 1])
                self.pos += 2
            elif c == '"':
                self.pos += 1
                self.expect_term_end()
                return "".join(out)
            else:
                out.append(c)
                self.pos += 1
        raise self.fail('a closing " for the quote opened here', start)

    def bare(self) -> str:
        start = self.pos
        while self.pos < len(self.query) and not self.query[self.pos].isspace():
            if self.query[self.pos] == '"':
                raise self.fail('a space before " (or quote the whole value)')
            self.pos += 1
        return self.query[start : self.pos]

    def expect_term_end(self) -> None:
        if not self.at_end() and not self.query[self.pos].isspace():
            raise self.fail("a space after the closing quote")


def parse(query: str, *, max_chars: int = 1024, max_terms: int = 32) -> SearchQuery:
    """Parse a query; raise ``QuerySyntaxError`` (a 400) on bad syntax."""
    if len(query) > max_chars:
        raise QuerySyntaxError(query, max_chars, f"at most {max_chars} characters")
    if "\x00" in query:
        raise QuerySyntaxError(query, query.index("\x00"), "no NUL character")
    s = _Scanner(query)
    filters: list[Filter] = []
    text: list[str] = []
    while True:
        s.skip_space()
        if s.at_end():
            break
        if len(filters) + len(text) == max_terms:
            raise s.fail(f"at most {max_terms} terms")
        term = _term(s)
        if isinstance(term, Filter):
            filters.append(term)
        elif term:
            text.append(term)
    return SearchQuery(tuple(filters), tuple(text))


def _term(s: _Scanner) -> Filter | str:
    start = s.pos
    if s.query[s.pos] == '"':
        return s.quoted()  # may be empty: the caller drops it
    negated = s.query[s.pos] == "!"
    if negated:
        s.pos += 1
    match = KEY_PATTERN.match(s.query, s.pos)
    end = match.end() if match else s.pos
    if end < len(s.query) and s.query[end] == ":" and match:
        s.pos = end + 1
        return _filter(s, start, match.group(), negated)
    if negated:
        raise s.fail("a key:value filter after !", start + 1)
    return s.bare()


def _filter(s: _Scanner, start: int, raw_key: str, negated: bool) -> Filter:
    if len(raw_key) > MAX_KEY_CHARS:
        raise s.fail(f"a key of at most {MAX_KEY_CHARS} characters", start)
    key = ALIASES.get(raw_key, raw_key)
    value_at = s.pos
    if s.at_end() or s.query[s.pos].isspace():
        raise s.fail(f"a value after {raw_key}:")
    kind = KEYS.get(key, Kind.TEXT)
    if kind is Kind.COUNT:
        op, value = _count(s, raw_key)
        return Filter(key, value, op, negated)
    if kind is Kind.TIME:
        op, when = _time(s, raw_key)
        return Filter(key, when, op, negated)
    raw = s.quoted() if s.query[s.pos] == '"' else s.bare()
    if kind is Kind.STATUS:
        raw = STATUS_ALIASES.get(raw, raw)
        _one_of(s, raw, STATUSES, value_at, f"is: to be one of {', '.join(STATUSES)}")
    elif kind is Kind.LEVEL:
        _one_of(s, raw, LEVELS, value_at, f"level: to be one of {', '.join(LEVELS)}")
    elif not raw:
        raise s.fail(f"a value after {raw_key}:", value_at)
    return Filter(key, raw, "=", negated)


def _one_of(s: _Scanner, value: str, allowed: tuple[str, ...], at: int, expected: str) -> None:
    if value not in allowed:
        raise s.fail(expected, at)


def _operator(s: _Scanner) -> str:
    for op in OPERATORS:
        if s.query.startswith(op, s.pos):
            s.pos += len(op)
            return op
    return "="


def _count(s: _Scanner, raw_key: str) -> tuple[str, int]:
    op = _operator(s)
    at = s.pos
    word = s.bare()
    if not word.isascii() or not word.isdigit() or int(word) > MAX_COUNT:
        raise s.fail(f"a whole number after {raw_key}: (e.g. {raw_key}:>100)", at)
    return op, int(word)


def _time(s: _Scanner, raw_key: str) -> tuple[str, RelativeTime | AbsoluteTime]:
    expected = f"a relative time (-24h, +7d) or a date (2024-01-31) after {raw_key}:"
    op_at = s.pos
    op = _operator(s)
    at = s.pos
    word = s.bare()
    relative = RELATIVE.fullmatch(word)
    if relative:
        if op != "=" or at != op_at:
            raise s.fail("a relative time without an operator (-24h: within 24 hours)", op_at)
        sign, amount, unit = relative.groups()
        return op, RelativeTime(sign, int(amount), unit)
    when = _absolute(word)
    if when is None:
        raise s.fail(expected, at)
    return op, when


def _absolute(word: str) -> AbsoluteTime | None:
    try:
        if DATE.fullmatch(word):
            day = dt.datetime.strptime(word, "%Y-%m-%d").replace(tzinfo=dt.UTC)
            return AbsoluteTime(day.timestamp(), date_only=True)
        if DATETIME.fullmatch(word):
            moment = dt.datetime.fromisoformat(word.replace("Z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=dt.UTC)
            return AbsoluteTime(moment.timestamp(), date_only=False)
    except (ValueError, OverflowError):
        return None
    return None


@dataclass(frozen=True)
class TimeRange:
    """Inclusive lower and exclusive upper bounds in unix seconds; None is open."""

    low: float | None
    high: float | None


def time_range(f: Filter, now: float) -> TimeRange:
    """What a time filter means at ``now``."""
    value = f.value
    if isinstance(value, RelativeTime):
        edge = now - value.seconds
        return TimeRange(edge, None) if value.sign == "-" else TimeRange(None, edge)
    assert isinstance(value, AbsoluteTime)
    start = value.timestamp
    end = start + 86400 if value.date_only else start
    ranges = {
        "=": TimeRange(start, end) if value.date_only else TimeRange(start, start + 1),
        ">": TimeRange(end if value.date_only else start + 1e-6, None),
        ">=": TimeRange(start, None),
        "<": TimeRange(None, start),
        "<=": TimeRange(None, end if value.date_only else start + 1e-6),
    }
    return ranges[f.op]


def glob_to_like(value: str) -> str | None:
    """A value with ``*`` wildcards as a LIKE pattern (escape ``\\``), else None."""
    if "*" not in value:
        return None
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace("*", "%")
