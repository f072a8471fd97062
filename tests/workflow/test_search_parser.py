"""The search language: what each form means, the errors it gives, and a round trip
(``parse(q.format()) == q``) over generated queries."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracebox.search import (
    KEYS,
    LEVELS,
    STATUSES,
    AbsoluteTime,
    Filter,
    QuerySyntaxError,
    RelativeTime,
    SearchQuery,
    glob_to_like,
    parse,
    time_range,
)

DAY = 86400.0


def test_the_issue_example() -> None:
    q = parse("is:unresolved level:error release:1.4.2 user.email:a@b.c browser:Firefox")
    assert q == SearchQuery(
        (
            Filter("is", "unresolved"),
            Filter("level", "error"),
            Filter("release", "1.4.2"),
            Filter("user.email", "a@b.c"),
            Filter("browser", "Firefox"),
        )
    )


def test_every_form() -> None:
    q = parse(
        "assigned:me !environment:staging first-seen:-24h last-seen:>=2024-01-31 "
        'times-seen:>100 url:"https://x.test/a b" "timed out" crash os:*Linux* release:latest'
    )
    assert q.filters == (
        Filter("assigned", "me"),
        Filter("environment", "staging", negated=True),
        Filter("first-seen", RelativeTime("-", 24, "h")),
        Filter(
            "last-seen",
            AbsoluteTime(dt.datetime(2024, 1, 31, tzinfo=dt.UTC).timestamp(), True),
            ">=",
        ),
        Filter("times-seen", 100, ">"),
        Filter("url", "https://x.test/a b"),
        Filter("os", "*Linux*"),
        Filter("release", "latest"),
    )
    assert q.text == ("timed out", "crash")


def test_sentry_spellings_are_accepted_and_written_back() -> None:
    q = parse("firstSeen:+7d timesSeen:<=5 age:-1w is:archived")
    assert [f.key for f in q.filters] == ["first-seen", "times-seen", "first-seen", "is"]
    assert q.filters[3].value == "ignored"
    assert q.format() == "first-seen:+7d times-seen:<=5 first-seen:-1w is:ignored"
    assert q.to_sentry() == "firstSeen:+7d timesSeen:<=5 firstSeen:-1w is:ignored"


def test_quotes_and_escapes() -> None:
    q = parse(r'message:"say \"hi\" \\ now" "a:b"')
    assert q.filters == (Filter("message", 'say "hi" \\ now'),)
    assert q.text == ("a:b",)  # a quoted phrase is text even when it looks like a filter
    assert parse(q.format()) == q
    assert parse('""  ') == SearchQuery()  # an empty phrase means nothing


@pytest.mark.parametrize(
    ("query", "position", "expected"),
    [
        ("level:", 7, "a value after level:"),
        ("is:unresolved level: x", 21, "a value after level:"),
        ('browser:"Firefox', 9, 'a closing " for the quote opened here'),
        ('"abc"def', 6, "a space after the closing quote"),
        ('ab"c', 3, 'a space before " (or quote the whole value)'),
        ("is:open", 4, "is: to be one of unresolved, resolved, ignored"),
        ("level:critical", 7, "level: to be one of fatal, error, warning, info, debug"),
        ("times-seen:many", 12, "a whole number after times-seen:"),
        ("times-seen:>-1", 13, "a whole number after times-seen:"),
        ("first-seen:yesterday", 12, "a relative time (-24h, +7d) or a date (2024-01-31)"),
        ("first-seen:>-24h", 12, "a relative time without an operator"),
        ("last-seen:2024-02-30", 11, "a relative time (-24h, +7d) or a date"),
        ("!crash", 2, "a key:value filter after !"),
        ('url:""', 5, "a value after url:"),
    ],
)
def test_errors_say_where_and_what(query: str, position: int, expected: str) -> None:
    with pytest.raises(QuerySyntaxError) as caught:
        parse(query)
    assert caught.value.position + 1 == position, caught.value.message
    assert caught.value.expected.startswith(expected), caught.value.expected
    assert caught.value.message.startswith(f"query is invalid at position {position}: ")
    assert caught.value.status_code == 400


def test_limits_at_and_past() -> None:
    at = "x" * 1024
    assert parse(at).text == (at,)
    with pytest.raises(QuerySyntaxError, match="at most 1024 characters"):
        parse(at + "x")
    terms = " ".join(f"t{i}" for i in range(32))
    assert len(parse(terms).text) == 32
    with pytest.raises(QuerySyntaxError, match="at most 32 terms") as caught:
        parse(terms + " t32")
    assert caught.value.position == len(terms) + 1


def test_time_ranges() -> None:
    now = 1_700_000_000.0
    assert time_range(parse("first-seen:-24h").filters[0], now).low == now - DAY
    assert time_range(parse("first-seen:+2d").filters[0], now).high == now - 2 * DAY
    day = dt.datetime(2024, 1, 31, tzinfo=dt.UTC).timestamp()
    on = time_range(parse("last-seen:2024-01-31").filters[0], now)
    assert (on.low, on.high) == (day, day + DAY)
    after = time_range(parse("last-seen:>2024-01-31").filters[0], now)
    assert (after.low, after.high) == (day + DAY, None)
    before = time_range(parse("last-seen:<2024-01-31T12:00:00+01:00").filters[0], now)
    assert (before.low, before.high) == (None, day + 11 * 3600)


def test_globs() -> None:
    assert glob_to_like("*check_out%*") == "%check\\_out\\%%"
    assert glob_to_like("plain") is None


# --- round trip ------------------------------------------------------------------------

KEY_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
tag_keys = st.builds(
    lambda a, b: a + b,
    st.sampled_from(KEY_START),
    st.text(st.sampled_from(KEY_START + ".-"), max_size=12),
).filter(
    lambda k: (
        k not in KEYS
        and k
        not in {
            "firstSeen",
            "first_seen",
            "age",
            "lastSeen",
            "last_seen",
            "timesSeen",
            "times_seen",
        }
        and k not in {"assigned_to", "assignee"}
    )
)
texts = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=24,
)
moments = st.datetimes(
    min_value=dt.datetime(1971, 1, 1), max_value=dt.datetime(2200, 1, 1), timezones=st.just(dt.UTC)
)


@st.composite
def filters(draw: st.DrawFn) -> Filter:
    negated = draw(st.booleans())
    choice = draw(st.sampled_from(["is", "assigned", "level", "text", "time", "count"]))
    if choice == "is":
        return Filter("is", draw(st.sampled_from(STATUSES)), negated=negated)
    if choice == "level":
        return Filter("level", draw(st.sampled_from(LEVELS)), negated=negated)
    if choice == "assigned":
        return Filter("assigned", draw(texts), negated=negated)
    if choice == "count":
        op = draw(st.sampled_from([">=", "<=", ">", "<", "="]))
        return Filter("times-seen", draw(st.integers(0, 2**63 - 1)), op, negated)
    if choice == "time":
        key = draw(st.sampled_from(["first-seen", "last-seen"]))
        if draw(st.booleans()):
            rel = RelativeTime(
                draw(st.sampled_from("+-")),
                draw(st.integers(0, 999_999_999)),
                draw(st.sampled_from("smhdw")),
            )
            return Filter(key, rel, "=", negated)
        moment = draw(moments)
        date_only = draw(st.booleans())
        if date_only:
            moment = moment.replace(hour=0, minute=0, second=0, microsecond=0)
        op = draw(st.sampled_from([">=", "<=", ">", "<", "="]))
        return Filter(key, AbsoluteTime(moment.timestamp(), date_only), op, negated)
    key = draw(st.sampled_from(["release", "environment", "platform", "user.email"]) | tag_keys)
    return Filter(key, draw(texts), negated=negated)


queries = st.builds(
    SearchQuery,
    st.lists(filters(), max_size=8).map(tuple),
    st.lists(texts, max_size=4).map(tuple),
)


@settings(max_examples=400, deadline=None)
@given(queries)
def test_round_trip(q: SearchQuery) -> None:
    assert parse(q.format(), max_chars=10**6, max_terms=100) == q


@settings(max_examples=400, deadline=None)
@given(st.text(st.sampled_from(list('ab:!"\\ -*<>=is:level:first-seen:1d2024-01-31'))))
def test_any_input_parses_or_fails_cleanly(text: str) -> None:
    try:
        q = parse(text)
    except QuerySyntaxError as e:
        assert 0 <= e.position <= len(text)
        return
    assert parse(q.format(), max_chars=10**6, max_terms=100) == q
