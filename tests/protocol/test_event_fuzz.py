"""normalize_event and summarize never fail on a JSON object, and always give the
documented shape (docs/design.md "Normalized event")."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tracebox.protocol.event import normalize_event, summarize
from tracebox.protocol.levels import LEVELS

NOW = 1_700_000_000.0
EVENT_KEYS = [
    "event_id",
    "timestamp",
    "level",
    "platform",
    "logger",
    "transaction",
    "server_name",
    "release",
    "dist",
    "environment",
    "culprit",
    "message",
    "logentry",
    "sentry.interfaces.Message",
    "exception",
    "sentry.interfaces.Exception",
    "threads",
    "stacktrace",
    "breadcrumbs",
    "tags",
    "user",
    "request",
    "contexts",
    "extra",
    "modules",
    "sdk",
    "fingerprint",
]
INNER_KEYS = [
    "values",
    "type",
    "value",
    "module",
    "mechanism",
    "synthetic",
    "stacktrace",
    "frames",
    "filename",
    "function",
    "abs_path",
    "lineno",
    "in_app",
    "pre_context",
    "vars",
    "instruction_addr",
    "id",
    "name",
    "timestamp",
    "message",
    "params",
    "formatted",
    "level",
    "ip_address",
    "email",
    "username",
    "url",
    "headers",
    "category",
    "data",
    "platform",
]

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=30)
    | st.sampled_from(["{{auto}}", "2023-11-14T22:13:19Z", "warn", "40", "%s {} %d", "-"])
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.sampled_from(INNER_KEYS) | st.text(max_size=6), inner, max_size=6)
    ),
    max_leaves=30,
)
events = st.dictionaries(
    st.sampled_from(EVENT_KEYS) | st.text(max_size=8), json_values, max_size=12
)

OPTIONAL_STRINGS = ("logger", "transaction", "server_name", "release", "dist", "culprit")
OPTIONAL_OBJECTS = ("user", "request", "contexts", "extra", "modules", "sdk")
VALUES = ("exception", "threads", "breadcrumbs")


def check_shape(event: dict[str, Any]) -> None:
    assert isinstance(event["event_id"], str) and len(event["event_id"]) == 32
    int(event["event_id"], 16)
    assert isinstance(event["timestamp"], float) and isinstance(event["received"], float)
    assert NOW - 30 * 86400 <= event["timestamp"] <= NOW + 60
    assert isinstance(event["platform"], str) and isinstance(event["environment"], str)
    assert event["level"] in LEVELS
    assert all(
        isinstance(k, str) and isinstance(v, str) and 0 < len(k) <= 200 and 0 < len(v) <= 200
        for k, v in event["tags"]
    )
    assert all(isinstance(event[key], str) for key in OPTIONAL_STRINGS if key in event)
    assert all(isinstance(event[key], dict) for key in OPTIONAL_OBJECTS if key in event)
    for key in VALUES:
        if key in event:
            assert event[key]["values"] and all(isinstance(v, dict) for v in event[key]["values"])
    for crumb in event.get("breadcrumbs", {}).get("values", []):
        assert isinstance(crumb["timestamp"], float) and crumb["level"] in LEVELS
    for exception in event.get("exception", {}).get("values", []):
        assert exception.keys() <= {
            "type",
            "value",
            "module",
            "mechanism",
            "stacktrace",
            "thread_id",
        }
        for frame in exception.get("stacktrace", {}).get("frames", []):
            assert isinstance(frame.get("lineno", 0), int) and isinstance(
                frame.get("in_app", True), bool
            )
    if "logentry" in event:
        entry = event["logentry"]
        assert isinstance(entry["message"], str) and isinstance(entry["formatted"], str)
        assert isinstance(entry["params"], list | dict)
    if "request" in event and "headers" in event["request"]:
        assert all(
            isinstance(n, str) and isinstance(v, str) for n, v in event["request"]["headers"]
        )
    if "fingerprint" in event:
        assert event["fingerprint"] and all(isinstance(p, str) for p in event["fingerprint"])


@settings(max_examples=250, deadline=None)
@given(events, st.none() | st.text(max_size=36), st.none() | st.just("192.0.2.1"))
def test_any_json_object_normalizes(
    raw: dict[str, Any], event_id: str | None, ip: str | None
) -> None:
    event = normalize_event(raw, received_at=NOW, client_ip=ip, event_id=event_id)
    check_shape(event)
    summary = summarize(event)
    assert isinstance(summary.title, str) and summary.title
    assert summary.level in LEVELS


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=8), json_values, max_size=8))
def test_any_json_object_under_any_interface_key(inner: dict[str, Any]) -> None:
    for key in EVENT_KEYS:
        for value in (inner, [inner], {"values": [inner]}, {"frames": [inner]}):
            event = normalize_event({key: value}, received_at=NOW, client_ip=None)
            check_shape(event)
            summarize(event)


frame_keys = st.sampled_from(
    [
        "filename",
        "abs_path",
        "function",
        "module",
        "lineno",
        "colno",
        "in_app",
        "vars",
        "pre_context",
        "post_context",
        "context_line",
        "instruction_addr",
        "platform",
        "package",
    ]
)
frames = st.dictionaries(frame_keys, json_values, max_size=6)
stacktraces = st.fixed_dictionaries({"frames": st.lists(frames | json_values, max_size=6)})
exceptions = st.fixed_dictionaries(
    {},
    optional={
        "type": json_values,
        "value": json_values,
        "module": json_values,
        "mechanism": st.fixed_dictionaries(
            {}, optional={"synthetic": json_values, "type": json_values}
        ),
        "thread_id": json_values,
        "stacktrace": stacktraces | json_values,
    },
)
structured_events = st.fixed_dictionaries(
    {},
    optional={
        "exception": st.lists(exceptions, max_size=3)
        | st.builds(lambda v: {"values": v}, st.lists(exceptions, max_size=3)),
        "threads": st.lists(
            st.fixed_dictionaries({}, optional={"id": json_values, "stacktrace": stacktraces})
        ),
        "stacktrace": stacktraces,
        "platform": st.sampled_from(["node", "javascript", "native", "cocoa", "python"])
        | json_values,
        "transaction": json_values,
        "request": st.fixed_dictionaries({}, optional={"url": json_values, "headers": json_values}),
        "user": st.dictionaries(
            st.sampled_from(["id", "email", "username", "ip_address"]), json_values
        ),
    },
)


@settings(max_examples=120, deadline=None)
@given(structured_events)
def test_structured_but_odd_events_normalize(raw: dict[str, Any]) -> None:
    event = normalize_event(raw, received_at=NOW, client_ip="192.0.2.1")
    check_shape(event)
    summary = summarize(event)
    assert summary.culprit is None or 0 < len(summary.culprit) <= 200
