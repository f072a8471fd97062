"""Contracts that hold for any input: never raise, always a stable 32-hex hash."""

from __future__ import annotations

import copy
import hashlib
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import tracebox.grouping
from tests.grouping.samples import SAMPLES
from tracebox.grouping import GROUPING_VERSION, Grouping, calculate

_HEX32 = re.compile(r"[0-9a-f]{32}")
_VARIANTS = {"fingerprint", "exception", "message", "fallback"}

# Strings that reach the normalization rules, mixed with arbitrary text.
_MARKERS = [
    "block in x", "block (2 levels) in ", "_erb__12_34", "lambda$f$0", "access$1", "$$Lambda$1/0x1",
    "{closure:", "class@anonymous", "::h0123456789abcdef", "Vec<T>::new", "<", ">", "->",
    "Object.", "new ", " [as x]", ".func1.2", "https://a.io/x.js", "app:///", "<anonymous>",
    "{{ default }}", "{{ type }}", "{{ tags.t }}", "{{ function }}", "{{ message }}", "{{ x }}",
    "2024-01-01T00:00:00Z", "10.0.0.1", "::1", "0x1f", "\x00", "\ud800", "\n", "%s",
]  # fmt: skip
_text = st.text(max_size=20) | st.sampled_from(_MARKERS)
_string = st.builds(lambda a, b: a + b, _text, _text)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _string,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_string, inner, max_size=3),
    max_leaves=8,
)
_platform = st.sampled_from(["python", "node", "javascript", "java", "go", "ruby", "php", "native"])


def _shaped(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A dict with any subset of ``fields``, or, one time in four, any JSON value."""
    shaped = st.fixed_dictionaries({}, optional=fields)
    return st.one_of(shaped, shaped, shaped, _json)


_frame = _shaped(
    function=_string | _json,
    module=_string | _json,
    filename=_string | _json,
    abs_path=_string,
    package=_string,
    platform=_platform | _json,
    lineno=st.integers(),
    in_app=st.none() | st.booleans() | _json,
)
_exception = _shaped(
    type=_string | _json,
    value=_string | _json,
    mechanism=_shaped(synthetic=st.booleans() | _json),
    stacktrace=_shaped(frames=st.lists(_frame, max_size=6) | _json),
)
_event = st.fixed_dictionaries(
    {},
    optional={
        "platform": _platform | _json,
        "level": _string | _json,
        "logger": _string | _json,
        "transaction": _string | _json,
        "exception": _shaped(values=st.lists(_exception, max_size=3) | _json),
        "stacktrace": _shaped(frames=st.lists(_frame, max_size=4)),
        "logentry": _shaped(message=_string | _json, formatted=_string | _json),
        "fingerprint": st.one_of(st.just([]), st.lists(_string | _json, max_size=4), _json),
        "tags": st.lists(st.tuples(_string, _string).map(list) | _json, max_size=3) | _json,
    },
)

# Mostly well-shaped exception events, which the generic strategy above rarely builds.
_exception_event = st.fixed_dictionaries(
    {
        "platform": _platform,
        "exception": st.fixed_dictionaries(
            {"values": st.lists(_exception.filter(lambda e: isinstance(e, dict)), min_size=1)}
        ),
    },
    optional={"fingerprint": st.lists(st.sampled_from(_MARKERS), max_size=3)},
)
_events = _event | _exception_event


@settings(max_examples=400, deadline=None)
@given(_events)
def test_any_event_gets_a_stable_grouping(event: dict[str, Any]) -> None:
    grouping = calculate(event)
    assert _HEX32.fullmatch(grouping.hash)
    assert grouping.version == GROUPING_VERSION
    assert grouping.components[0] in _VARIANTS
    assert all(isinstance(c, str) and "\x00" not in c for c in grouping.components)
    joined = "\x00".join(grouping.components).encode("utf-8")  # storable: valid UTF-8
    assert grouping.hash == hashlib.md5(joined).hexdigest()
    assert calculate(copy.deepcopy(event)) == grouping


@settings(max_examples=100, deadline=None)
@given(_events, st.integers(-(10**6), 10**6), st.integers(0, 500))
def test_line_and_column_numbers_never_matter(event: dict[str, Any], line: int, col: int) -> None:
    moved = copy.deepcopy(event)
    exception = moved.get("exception")
    values = exception.get("values") if isinstance(exception, dict) else None
    for exc in values if isinstance(values, list) else []:
        stack = exc.get("stacktrace") if isinstance(exc, dict) else None
        frames = stack.get("frames") if isinstance(stack, dict) else None
        for frame in frames if isinstance(frames, list) else []:
            if isinstance(frame, dict):
                frame.update(lineno=line, colno=col)
    assert calculate(moved).hash == calculate(event).hash


def test_public_surface() -> None:
    assert tracebox.grouping.__all__ == ["GROUPING_VERSION", "Grouping", "calculate"]
    grouping = calculate(SAMPLES[0].event)
    assert isinstance(grouping, Grouping)
    assert hash(grouping) == hash(calculate(SAMPLES[0].copy()))  # usable in sets
