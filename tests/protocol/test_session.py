from typing import Any

import pytest

from tracebox.protocol.session import normalize_session, normalize_session_aggregates

NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z
SID = "7c7b6585-f901-4351-bf8d-02711b721929"


def session(**changes: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "sid": SID,
        "did": "user-1",
        "seq": 3,
        "init": False,
        "started": "2023-11-14T22:10:00Z",
        "timestamp": "2023-11-14T22:13:00Z",
        "duration": 180,
        "status": "exited",
        "errors": 0,
        "abnormal_mechanism": "none",
        "attrs": {"release": "app@1.0.0", "environment": "staging", "ip_address": "{{auto}}"},
    }
    raw.update(changes)
    return {key: value for key, value in raw.items() if value is not ...}


def test_develop_docs_session() -> None:
    assert normalize_session(session(), received_at=NOW) == {
        "sid": SID,
        "did": "user-1",
        "seq": 3,
        "init": False,
        "started": NOW - 200,
        "timestamp": NOW - 20,
        "duration": 180.0,
        "status": "exited",
        "errors": 0,
        "release": "app@1.0.0",
        "environment": "staging",
    }


def test_defaults() -> None:
    raw = {"started": NOW - 10, "attrs": {"release": "r"}}
    update = normalize_session(raw, received_at=NOW, client_ip="1.2.3.4")
    assert update is not None
    assert len(update["sid"]) == 36 and update["did"] is None
    assert (update["seq"], update["init"], update["status"], update["errors"]) == (
        int(NOW * 1000),
        False,
        "ok",
        0,
    )
    assert (update["timestamp"], update["duration"], update["environment"]) == (
        NOW,
        None,
        "production",
    )


def test_init_forces_seq_zero() -> None:
    update = normalize_session(session(init=True, seq=99), received_at=NOW)
    assert update is not None and update["seq"] == 0 and update["init"] is True


def test_timestamp_before_start_is_the_start() -> None:
    update = normalize_session(session(timestamp=NOW - 500, started=NOW - 100), received_at=NOW)
    assert update is not None and update["timestamp"] == NOW - 100


def test_sid_is_canonical_uuid() -> None:
    update = normalize_session(session(sid=SID.upper().replace("-", "")), received_at=NOW)
    assert update is not None and update["sid"] == SID


@pytest.mark.parametrize("status", ["ok", "exited", "crashed", "abnormal", "errored", "unhandled"])
def test_statuses(status: str) -> None:
    update = normalize_session(session(status=status), received_at=NOW)
    assert update is not None and update["status"] == status


@pytest.mark.parametrize(
    "changes",
    [
        {"attrs": ...},
        {"attrs": {}},
        {"attrs": {"release": ""}},
        {"attrs": {"release": "a/b"}},
        {"attrs": {"release": "latest"}},
        {"attrs": {"release": "r\n"}},
        {"attrs": {"release": "r" * 201}},
        {"attrs": {"release": 5}},
        {"started": ...},
        {"started": "soon"},
        {"status": "weird"},
        {"status": ["ok"]},
        {"sid": "not-a-uuid"},
        {"sid": 5},
        {"seq": -1},
        {"seq": 2**64 - 1},
        {"seq": "3"},
        {"init": "yes"},
        {"errors": 1.5},
        {"timestamp": "later"},
        {"timestamp": NOW + 61},
        {"started": NOW - 5 * 86400 - 1, "timestamp": NOW},
    ],
)
def test_invalid_sessions_are_dropped(changes: dict[str, Any]) -> None:
    assert normalize_session(session(**changes), received_at=NOW) is None


@pytest.mark.parametrize("raw", [None, [], "x", 1])
def test_non_object_session(raw: Any) -> None:
    assert normalize_session(raw, received_at=NOW) is None


def test_time_limits_are_inclusive() -> None:
    assert (
        normalize_session(session(started=NOW - 5 * 86400, timestamp=NOW + 60), received_at=NOW)
        is not None
    )


def test_invalid_environment_becomes_default() -> None:
    update = normalize_session(
        session(attrs={"release": "r", "environment": "a b/c"}), received_at=NOW
    )
    assert update is not None and update["environment"] == "production"


@pytest.mark.parametrize("duration", [-1, "60", True])
def test_unusable_duration_is_dropped_alone(duration: Any) -> None:
    update = normalize_session(session(duration=duration), received_at=NOW)
    assert update is not None and update["duration"] is None


# --- aggregates ------------------------------------------------------------------------


def aggregates(*buckets: Any, attrs: Any = None) -> dict[str, Any]:
    return {
        "aggregates": list(buckets),
        "attrs": attrs or {"release": "app@1.0.0", "environment": "development"},
    }


def test_python_request_mode_aggregates() -> None:
    # sentry-python 1.x in request mode: minute buckets, "did" optional
    raw = aggregates(
        {"started": "2023-11-14T22:12:00Z", "exited": 123},
        {
            "started": "2023-11-14T22:12:00Z",
            "did": "u1",
            "exited": 12,
            "errored": 3,
            "crashed": 1,
            "abnormal": 0,
        },
    )
    assert normalize_session_aggregates(raw, received_at=NOW) == [
        {
            "started": NOW - 80,
            "did": None,
            "exited": 123,
            "errored": 0,
            "crashed": 0,
            "abnormal": 0,
            "release": "app@1.0.0",
            "environment": "development",
        },
        {
            "started": NOW - 80,
            "did": "u1",
            "exited": 12,
            "errored": 3,
            "crashed": 1,
            "abnormal": 0,
            "release": "app@1.0.0",
            "environment": "development",
        },
    ]


def test_invalid_buckets_are_dropped_alone() -> None:
    raw = aggregates(
        {"started": NOW - 60, "exited": 1},
        {"exited": 1},
        {"started": NOW - 60, "exited": -1},
        {"started": NOW - 60, "crashed": "1"},
        {"started": NOW + 3600, "exited": 1},
        "bucket",
    )
    assert [b["exited"] for b in normalize_session_aggregates(raw, received_at=NOW)] == [1]


def test_at_most_100_buckets() -> None:
    raw = aggregates(*({"started": NOW - 60, "exited": i} for i in range(150)))
    result = normalize_session_aggregates(raw, received_at=NOW)
    assert len(result) == 100 and result[-1]["exited"] == 99


@pytest.mark.parametrize(
    "raw",
    [
        None,
        [],
        {"aggregates": []},
        {"attrs": {"release": "r"}},
        {"aggregates": "x", "attrs": {"release": "r"}},
        aggregates({"started": NOW, "exited": 1}, attrs={"environment": "prod"}),
    ],
)
def test_invalid_aggregates_item(raw: Any) -> None:
    assert normalize_session_aggregates(raw, received_at=NOW) == []
