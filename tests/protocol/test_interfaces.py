from typing import Any

import pytest

from tracebox.protocol.event import normalize_event
from tracebox.protocol.interfaces import MAX_FRAMES

NOW = 1_700_000_000.0
EXC = {"type": "ValueError", "value": "bad input"}


def normalize(raw: dict[str, Any]) -> dict[str, Any]:
    return normalize_event(raw, received_at=NOW, client_ip=None)


# --- exceptions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        {"exception": [EXC]},  # sentry-go 0.20.0: a bare list
        {"exception": {"values": [EXC]}},
        {"exception": EXC},  # one bare object (old raven clients)
        {"sentry.interfaces.Exception": {"values": [EXC]}},
        {"sentry.interfaces.Exception": EXC},
    ],
)
def test_exception_shapes(raw: dict[str, Any]) -> None:
    assert normalize(raw)["exception"] == {"values": [EXC]}


def test_chained_exceptions_keep_order_and_mechanism() -> None:
    cause = {
        "type": "KeyError",
        "value": "'k'",
        "mechanism": {"type": "chained", "exception_id": 1, "parent_id": 0},
    }
    main = {
        "type": "ValueError",
        "value": "wrapped",
        "mechanism": {"type": "generic", "handled": False, "exception_id": 0},
    }
    values = normalize({"exception": {"values": [cause, main]}})["exception"]["values"]
    assert values == [cause, main]


def test_exception_fields_are_cleaned() -> None:
    raw = {
        "type": "E",
        "value": 42,
        "module": ["x"],
        "mechanism": "oops",
        "thread_id": 7,
        "unknown": 1,
        "stacktrace": {"frames": [{"function": "f"}], "registers": {"rip": "0x1"}},
    }
    assert normalize({"exception": [raw]})["exception"]["values"] == [
        {"type": "E", "value": "42", "thread_id": 7, "stacktrace": {"frames": [{"function": "f"}]}}
    ]


def test_exception_value_is_capped() -> None:
    value = normalize({"exception": [{"type": "E", "value": "x" * 10_000}]})["exception"]["values"][
        0
    ]["value"]
    assert len(value) == 8192


@pytest.mark.parametrize(
    "value", [[], {"values": []}, [{}], [None, 1, "x"], [{"module": "m"}], "boom", {"values": "x"}]
)
def test_unusable_exceptions_are_dropped(value: Any) -> None:
    assert "exception" not in normalize({"exception": value})


# --- frames ----------------------------------------------------------------------------

FULL_FRAME = {
    "filename": "app/views.py",
    "abs_path": "/srv/app/views.py",
    "function": "index",
    "raw_function": "index(request)",
    "module": "app.views",
    "package": "app",
    "platform": "python",
    "lineno": 12,
    "colno": 4,
    "context_line": "    raise ValueError()",
    "pre_context": ["def index():", None],
    "post_context": [],
    "in_app": True,
    "vars": {"x": "1"},
    "instruction_addr": "0x1000",
    "symbol_addr": 4096,
    "image_addr": "0x0",
}


def frames_of(raw_frames: Any) -> list[dict[str, Any]] | None:
    event = normalize({"exception": [{"type": "E", "stacktrace": {"frames": raw_frames}}]})
    frames: list[dict[str, Any]] | None = (
        event["exception"]["values"][0].get("stacktrace", {}).get("frames")
    )
    return frames


def test_frame_keeps_documented_keys() -> None:
    frame = dict(FULL_FRAME, extra_key="dropped", addr_mode="abs")
    assert frames_of([frame]) == [
        dict(FULL_FRAME, pre_context=["def index():", ""], symbol_addr="0x1000")
    ]


def test_frame_fields_of_the_wrong_type_are_dropped() -> None:
    frame = {
        "function": "f",
        "lineno": "12",
        "colno": -1,
        "in_app": "yes",
        "vars": [],
        "filename": 3,
        "pre_context": "x",
    }
    assert frames_of([frame]) == [{"function": "f"}]


def test_frame_without_location_is_dropped() -> None:
    assert frames_of([{"lineno": 1}, {"in_app": True}, None, "f", {"instruction_addr": "0x1"}]) == [
        {"instruction_addr": "0x1"}
    ]


def test_long_stack_traces_keep_both_ends() -> None:
    raw = [{"function": f"f{i}"} for i in range(1000)]
    frames = frames_of(raw)
    assert frames is not None and len(frames) == MAX_FRAMES
    assert frames[0] == {"function": "f0"} and frames[124] == {"function": "f124"}
    assert frames[125] == {"function": "f875"} and frames[-1] == {"function": "f999"}


def test_frame_count_at_the_limit_is_kept_whole() -> None:
    frames = frames_of([{"function": f"f{i}"} for i in range(MAX_FRAMES)])
    assert frames is not None and [f["function"] for f in frames] == [
        f"f{i}" for i in range(MAX_FRAMES)
    ]


def test_top_level_stacktrace_is_kept() -> None:
    # sentry-php attaches one to messages
    event = normalize({"stacktrace": {"frames": [{"filename": "index.php", "lineno": 3}]}})
    assert event["stacktrace"] == {"frames": [{"filename": "index.php", "lineno": 3}]}
    assert "stacktrace" not in normalize({"stacktrace": {"frames": []}})


# --- threads ---------------------------------------------------------------------------


@pytest.mark.parametrize("wrap", [lambda v: v, lambda v: {"values": v}])
def test_threads_shapes(wrap: Any) -> None:
    thread = {
        "id": 1,
        "name": "main",
        "crashed": True,
        "current": True,
        "main": True,
        "state": "RUNNABLE",
        "stacktrace": {"frames": [{"function": "run"}]},
        "junk": 1,
        "held_locks": {},
    }
    expected = {key: value for key, value in thread.items() if key != "junk"}
    assert normalize({"threads": wrap([thread, "bad", {"id": [1]}])})["threads"] == {
        "values": [expected]
    }


# --- breadcrumbs -----------------------------------------------------------------------


@pytest.mark.parametrize("wrap", [lambda v: v, lambda v: {"values": v}])
def test_breadcrumb_shapes(wrap: Any) -> None:
    crumbs = [
        {
            "timestamp": "2023-11-14T22:13:19Z",
            "category": "http",
            "message": "GET /",
            "level": "warn",
            "type": "http",
            "data": {"status": 200},
        },
        {"timestamp": 1699999998.5},
        {"message": "no time"},
        "bad",
    ]
    event = normalize({"timestamp": NOW - 1, "breadcrumbs": wrap(crumbs)})
    assert event["breadcrumbs"]["values"] == [
        {
            "timestamp": NOW - 1,
            "type": "http",
            "level": "warning",
            "category": "http",
            "message": "GET /",
            "data": {"status": 200},
        },
        {"timestamp": 1699999998.5, "type": "default", "level": "info"},
        {"timestamp": NOW - 1, "type": "default", "level": "info", "message": "no time"},
    ]


def test_breadcrumbs_keep_the_newest_100() -> None:
    crumbs = [{"timestamp": float(i), "message": str(i)} for i in range(150)]
    values = normalize({"breadcrumbs": crumbs})["breadcrumbs"]["values"]
    assert len(values) == 100 and values[0]["message"] == "50" and values[-1]["message"] == "149"


# --- messages --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "logentry"),
    [
        ({"message": "plain"}, {"message": "plain", "params": [], "formatted": "plain"}),
        # sentry-java 6.18.1 and sentry-php 3.18.0 send an object
        (
            {"message": {"formatted": "done"}},
            {"message": "done", "params": [], "formatted": "done"},
        ),
        (
            {"message": {"message": "a %s", "params": ["b"], "formatted": "a b"}},
            {"message": "a %s", "params": ["b"], "formatted": "a b"},
        ),
        (
            {"logentry": {"message": "n=%d", "params": [5]}},
            {"message": "n=%d", "params": [5], "formatted": "n=5"},
        ),
        (
            {"logentry": {"message": "x={} y={}", "params": ["1", None]}},
            {"message": "x={} y={}", "params": ["1", None], "formatted": "x=1 y=null"},
        ),
        (
            {"logentry": {"message": "%(who)s", "params": {"who": "me"}}},
            {"message": "%(who)s", "params": {"who": "me"}, "formatted": "me"},
        ),
        (
            {"logentry": {"message": "%s and %s", "params": ["one"]}},
            {"message": "%s and %s", "params": ["one"], "formatted": "one and %s"},
        ),
        (
            {"logentry": {"message": "%d", "params": ["NaN"]}},
            {"message": "%d", "params": ["NaN"], "formatted": "NaN"},
        ),
        (
            {"logentry": {"message": "100% sure", "params": [1]}},
            {"message": "100% sure", "params": [1], "formatted": "100% sure"},
        ),
        (
            {"logentry": {"message": "m", "params": "notalist"}},
            {"message": "m", "params": [], "formatted": "m"},
        ),
        (
            {"logentry": {"formatted": "f"}, "message": "ignored"},
            {"message": "f", "params": [], "formatted": "f"},
        ),
        (
            {"logentry": {}, "message": "fallback"},
            {"message": "fallback", "params": [], "formatted": "fallback"},
        ),
    ],
)
def test_message_shapes(raw: dict[str, Any], logentry: dict[str, Any]) -> None:
    assert normalize(raw)["logentry"] == logentry


@pytest.mark.parametrize("value", ["", {}, {"params": [1]}, 5, ["x"]])
def test_no_message(value: Any) -> None:
    assert "logentry" not in normalize({"message": value})


def test_message_is_capped() -> None:
    logentry = normalize({"message": {"message": "%s" * 10, "params": ["y" * 1000] * 10}})[
        "logentry"
    ]
    assert len(logentry["formatted"]) == 8192
    assert len(normalize({"message": "z" * 9000})["logentry"]["message"]) == 8192


def test_printf_width_cannot_explode() -> None:
    logentry = normalize({"logentry": {"message": "%999999999s", "params": ["x"]}})["logentry"]
    assert logentry["formatted"] == "%999999999s"
