from typing import Any

import pytest

from tracebox.errors import InvalidJson
from tracebox.protocol.event import normalize_event

NOW = 1_700_000_000.0
EVENT_ID = "9ec79c33ec9942ab8353589fcb2e04dc"


def normalize(raw: Any, **kwargs: Any) -> dict[str, Any]:
    return normalize_event(raw, received_at=NOW, client_ip="203.0.113.9", **kwargs)


@pytest.mark.parametrize("raw", [[], "x", 1, None, True])
def test_top_level_must_be_an_object(raw: Any) -> None:
    with pytest.raises(InvalidJson):
        normalize(raw)


def test_minimal_event_defaults() -> None:
    event = normalize({})
    assert len(event["event_id"]) == 32
    assert event == {
        "event_id": event["event_id"],
        "timestamp": NOW,
        "received": NOW,
        "platform": "other",
        "level": "error",
        "environment": "production",
        "tags": [],
    }


def test_times_are_floats_even_for_an_integer_receive_time() -> None:
    event = normalize_event({}, received_at=int(NOW), client_ip=None)
    assert type(event["timestamp"]) is float and type(event["received"]) is float


# --- event id --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", [EVENT_ID, EVENT_ID.upper(), "9ec79c33-ec99-42ab-8353-589fcb2e04dc"]
)
def test_event_id_forms(value: str) -> None:
    assert normalize({"event_id": value})["event_id"] == EVENT_ID


@pytest.mark.parametrize("value", ["", "xyz", EVENT_ID[:-1], EVENT_ID + "0", 42, None, ["a"]])
def test_invalid_event_id_is_replaced(value: Any) -> None:
    event_id = normalize({"event_id": value})["event_id"]
    assert len(event_id) == 32 and event_id != value
    int(event_id, 16)


def test_envelope_event_id_wins() -> None:
    header_id = "0" * 32
    assert normalize({"event_id": EVENT_ID}, event_id=header_id)["event_id"] == header_id
    # Rust sends the header id hyphenated.
    hyphenated = "9ec79c33-ec99-42ab-8353-589fcb2e04dc"
    assert normalize({}, event_id=hyphenated)["event_id"] == EVENT_ID
    # An unusable header id falls back to the payload's.
    assert normalize({"event_id": EVENT_ID}, event_id="nope")["event_id"] == EVENT_ID


# --- timestamps ------------------------------------------------------------------------

RECENT = NOW - 3600.0  # 2023-11-14T21:13:20Z


@pytest.mark.parametrize(
    "value",
    [
        RECENT,
        int(RECENT),
        "2023-11-14T21:13:20Z",
        "2023-11-14T21:13:20",  # naive means UTC, as Relay
        "2023-11-14T21:13:20.000",
        "2023-11-14T21:13:20.000000Z",  # sentry-python
        "2023-11-14T22:13:20+01:00",  # sentry-go RFC3339 with offset
        "2023-11-14T21:13:20.000000000-00:00",  # nanoseconds
        "1699996400",
    ],
)
def test_timestamp_forms(value: Any) -> None:
    assert normalize({"timestamp": value})["timestamp"] == RECENT


def test_timestamp_keeps_fraction() -> None:
    assert normalize({"timestamp": "2023-11-14T21:13:20.25Z"})["timestamp"] == RECENT + 0.25
    assert normalize({"timestamp": RECENT + 0.125})["timestamp"] == RECENT + 0.125


@pytest.mark.parametrize(
    ("offset", "kept"),
    [(60, True), (61, False), (-30 * 86400, True), (-30 * 86400 - 1, False)],
)
def test_timestamp_clamped_as_relay(offset: float, kept: bool) -> None:
    timestamp = normalize({"timestamp": NOW + offset})["timestamp"]
    assert timestamp == (NOW + offset if kept else NOW)


@pytest.mark.parametrize("value", ["yesterday", "", True, [1], {"a": 1}, "nan", "inf", 1e300])
def test_bad_timestamp_is_received_time(value: Any) -> None:
    assert normalize({"timestamp": value})["timestamp"] == NOW


# --- levels, scalars -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "level"),
    [
        ("fatal", "fatal"),
        ("ERROR", "error"),
        ("Warning", "warning"),
        ("warn", "warning"),
        ("log", "info"),
        ("critical", "fatal"),
        ("debug", "debug"),
        (10, "debug"),
        (20, "info"),
        (30, "warning"),
        (40, "error"),
        (50, "fatal"),
        (40.0, "error"),
        ("30", "warning"),
        (35, "error"),
        ("verbose", "error"),
        (True, "error"),
        (None, "error"),
    ],
)
def test_levels(value: Any, level: str) -> None:
    assert normalize({"level": value})["level"] == level


def test_names_only_when_present_and_strings() -> None:
    event = normalize(
        {
            "logger": "app",
            "transaction": "/users/{id}",
            "server_name": "",
            "release": 12,
            "dist": ["x"],
            "culprit": "a in b",
            "environment": "staging",
            "platform": "python",
        }
    )
    assert event["logger"] == "app" and event["transaction"] == "/users/{id}"
    assert "server_name" not in event and "dist" not in event
    assert event["release"] == "12"  # numbers are lenient strings, as Relay
    assert (event["culprit"], event["environment"], event["platform"]) == (
        "a in b",
        "staging",
        "python",
    )


def test_objects_are_kept_by_reference() -> None:
    extra = {"big": list(range(100))}
    event = normalize(
        {
            "extra": extra,
            "contexts": {"os": {"name": "Linux"}},
            "modules": [],
            "sdk": {"name": "sentry.go"},
        }
    )
    assert event["extra"] is extra
    assert event["contexts"] == {"os": {"name": "Linux"}}
    assert event["sdk"] == {"name": "sentry.go"}
    assert "modules" not in event


def test_fingerprint() -> None:
    assert normalize({"fingerprint": ["{{ default }}", 1, True, None, {}]})["fingerprint"] == [
        "{{ default }}",
        "1",
        "true",
    ]
    assert "fingerprint" not in normalize({"fingerprint": "one"})
    assert "fingerprint" not in normalize({"fingerprint": []})


# --- tags ------------------------------------------------------------------------------


def test_tags_from_object() -> None:
    tags = normalize({"tags": {"a": "b", "n": 1, "t": True, "empty": "", "none": None, "obj": {}}})[
        "tags"
    ]
    assert tags == [["a", "b"], ["n", "1"], ["t", "true"]]


def test_tags_from_pair_list() -> None:
    raw = [
        ["a", "b"],
        ["a", "again"],
        ["x"],
        "bad",
        ["", "v"],
        [" ", "v"],
        ["k", 2.5],
        ["k2", None],
    ]
    assert normalize({"tags": raw})["tags"] == [["a", "b"], ["k", "2.5"]]


def test_tag_lengths_are_capped_at_200() -> None:
    tags = normalize({"tags": {"k" * 201: "v" * 300, "ok": "v" * 200}})["tags"]
    assert tags == [["k" * 200, "v" * 200], ["ok", "v" * 200]]


@pytest.mark.parametrize("value", ["a=b", 5, None, [1, 2]])
def test_bad_tags_are_empty(value: Any) -> None:
    assert normalize({"tags": value})["tags"] == []


# --- user and request ------------------------------------------------------------------


def test_auto_ip_is_the_connection_address() -> None:
    user = normalize({"user": {"id": 42, "ip_address": "{{auto}}", "segment": "paid"}})["user"]
    assert user == {"id": "42", "ip_address": "203.0.113.9", "segment": "paid"}


def test_auto_ip_without_a_known_address_is_removed() -> None:
    event = normalize_event(
        {"user": {"ip_address": "{{auto}}", "email": "a@b.c"}}, received_at=NOW, client_ip=None
    )
    assert event["user"] == {"email": "a@b.c"}


def test_explicit_ip_is_kept_and_bad_user_fields_dropped() -> None:
    user = normalize({"user": {"ip_address": "10.0.0.1", "email": 5, "username": None}})["user"]
    assert user == {"ip_address": "10.0.0.1"}


@pytest.mark.parametrize("value", ["me", [], {}, {"ip_address": 5}])
def test_unusable_user_is_dropped(value: Any) -> None:
    assert "user" not in normalize({"user": value})


def test_request_headers_become_pairs() -> None:
    request = normalize(
        {
            "request": {
                "url": "https://x/y",
                "method": "GET",
                "headers": {"Host": "x", "X-N": 1, "Bad": None},
            }
        }
    )["request"]
    assert request == {
        "url": "https://x/y",
        "method": "GET",
        "headers": [["Host", "x"], ["X-N", "1"]],
    }
    pairs = normalize({"request": {"headers": [["A", "1"], ["B"], ["C", "3"]], "url": 5}})[
        "request"
    ]
    assert pairs == {"headers": [["A", "1"], ["C", "3"]]}


# --- legacy interface names ------------------------------------------------------------


def test_legacy_interface_names() -> None:
    event = normalize(
        {
            "sentry.interfaces.Exception": {"values": [{"type": "E", "value": "v"}]},
            "sentry.interfaces.Message": {"message": "hi %s", "params": ["you"]},
            "sentry.interfaces.User": {"id": "u"},
            "sentry.interfaces.Http": {"url": "http://h"},
        }
    )
    assert event["exception"] == {"values": [{"type": "E", "value": "v"}]}
    assert event["logentry"]["formatted"] == "hi you"
    assert event["user"] == {"id": "u"}
    assert event["request"] == {"url": "http://h"}
