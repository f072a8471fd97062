from typing import Any

import pytest

from tracebox.protocol.event import EventSummary, normalize_event, summarize

NOW = 1_700_000_000.0


def summary(raw: dict[str, Any]) -> EventSummary:
    return summarize(normalize_event(raw, received_at=NOW, client_ip="198.51.100.7"))


def frames(*specs: dict[str, Any]) -> dict[str, Any]:
    return {"frames": list(specs)}


def test_error_title_is_type_and_first_line_of_value() -> None:
    result = summary({"exception": [{"type": "ValueError", "value": "first line\nsecond"}]})
    assert result.title == "ValueError: first line"
    assert (result.type, result.value) == ("ValueError", "first line\nsecond")


def test_main_exception_is_the_last() -> None:
    raw = {
        "exception": {"values": [{"type": "Cause", "value": "c"}, {"type": "Main", "value": "m"}]}
    }
    assert summary(raw).title == "Main: m"


def test_error_title_line_is_capped_at_100_chars() -> None:
    title = summary({"exception": [{"type": "E", "value": "v" * 150}]}).title
    assert title == "E: " + "v" * 99 + "…"
    assert summary({"exception": [{"type": "E", "value": "v" * 100}]}).title == "E: " + "v" * 100


def test_error_without_value_or_type() -> None:
    assert summary({"exception": [{"type": "E"}]}).title == "E"
    no_type = summary({"exception": [{"value": "something"}]})
    assert (no_type.title, no_type.type) == ("Error: something", "Error")


def test_value_is_capped_at_1024() -> None:
    value = summary({"exception": [{"type": "E", "value": "x" * 5000}]}).value
    assert value is not None and len(value) == 1024


def test_synthetic_exception_title_is_the_crash_function() -> None:
    exception = {
        "type": "SIGSEGV",
        "value": "Segfault",
        "mechanism": {"type": "signalhandler", "synthetic": True},
        "stacktrace": frames(
            {"function": "main", "in_app": True}, {"function": "crash_here", "in_app": True}
        ),
    }
    result = summary({"exception": [exception], "platform": "native"})
    assert (result.title, result.type) == ("crash_here", None)
    exception.pop("stacktrace")
    assert summary({"exception": [exception]}).title == "<unknown>"


def test_message_title() -> None:
    result = summary({"message": {"message": "Hello %s", "params": ["you"]}})
    assert (result.title, result.message, result.type, result.value) == (
        "Hello you",
        "Hello you",
        None,
        None,
    )
    assert summary({"message": "line one\nline two"}).title == "line one"
    assert summary({"message": "m" * 120}).title == "m" * 99 + "…"


def test_unlabeled_event() -> None:
    result = summary({})
    assert (result.title, result.message, result.culprit) == ("<unlabeled event>", "", None)


def test_culprit_prefers_transaction() -> None:
    raw = {
        "transaction": "/checkout",
        "exception": [{"type": "E", "stacktrace": frames({"module": "m", "function": "f"})}],
    }
    assert summary(raw).culprit == "/checkout"


def test_culprit_is_the_newest_in_app_frame() -> None:
    stack = frames(
        {"module": "app.views", "function": "index", "in_app": True},
        {"module": "app.models", "function": "save", "in_app": True},
        {"module": "django.db", "function": "execute", "in_app": False},
    )
    raw = {"platform": "python", "exception": [{"type": "E", "stacktrace": stack}]}
    assert summary(raw).culprit == "app.models in save"


def test_culprit_falls_back_to_the_newest_frame() -> None:
    stack = frames({"filename": "a.rb", "function": "x"}, {"filename": "b.rb"})
    assert summary({"exception": [{"type": "E", "stacktrace": stack}]}).culprit == "b.rb in ?"


@pytest.mark.parametrize(
    ("platform", "frame", "culprit"),
    [
        ("node", {"filename": "app.js", "function": "handler", "in_app": True}, "handler(app.js)"),
        ("javascript", {"module": "bundle", "in_app": True}, "?(bundle)"),
        ("native", {"filename": "x.c", "function": "crash", "in_app": True}, "crash"),
        ("cocoa", {"filename": "x.m", "in_app": True}, "?"),
        (
            "python",
            {"filename": "x.py", "function": "f", "in_app": True, "platform": "node"},
            "f(x.py)",
        ),
    ],
)
def test_culprit_by_platform(platform: str, frame: dict[str, Any], culprit: str) -> None:
    raw = {"platform": platform, "exception": [{"type": "E", "stacktrace": frames(frame)}]}
    assert summary(raw).culprit == culprit


def test_culprit_from_last_exception_with_frames_then_request_url() -> None:
    raw = {
        "exception": [
            {"type": "A", "stacktrace": frames({"module": "early", "function": "f"})},
            {"type": "B"},
        ],
        "request": {"url": "https://shop/cart"},
    }
    assert summary(raw).culprit == "early in f"
    del raw["exception"]
    assert summary(raw).culprit == "https://shop/cart"
    assert (
        summary({"stacktrace": frames({"filename": "index.php", "function": "run"})}).culprit
        == "index.php in run"
    )
    assert summary({"culprit": "legacy"}).culprit == "legacy"


def test_culprit_is_capped() -> None:
    culprit = summary({"transaction": "t" * 300}).culprit
    assert culprit is not None and len(culprit) == 200


@pytest.mark.parametrize(
    ("user", "key"),
    [
        ({"id": 7, "email": "a@b.c"}, "id:7"),
        ({"email": "a@b.c", "username": "u"}, "email:a@b.c"),
        ({"username": "u", "ip_address": "1.2.3.4"}, "username:u"),
        ({"ip_address": "1.2.3.4"}, "ip:1.2.3.4"),
        ({"ip_address": "{{auto}}"}, "ip:198.51.100.7"),
        ({"segment": "x"}, None),
        (None, None),
    ],
)
def test_user_key(user: Any, key: str | None) -> None:
    assert summary({"user": user}).user_key == key


def test_scalar_fields() -> None:
    result = summary(
        {
            "platform": "go",
            "level": "warning",
            "release": "1.0",
            "environment": "prod",
            "transaction": "t",
        }
    )
    assert (
        result.platform,
        result.level,
        result.release,
        result.environment,
        result.transaction,
    ) == (
        "go",
        "warning",
        "1.0",
        "prod",
        "t",
    )


def test_message_with_a_synthetic_exception_is_titled_by_its_message() -> None:
    # @sentry/node 11 captureMessage: the stack rides on a type-less synthetic exception.
    raw = {
        "message": "tracebox sdk test message",
        "level": "warning",
        "exception": {
            "values": [
                {
                    "value": "tracebox sdk test message",
                    "mechanism": {"type": "generic", "synthetic": True},
                    "stacktrace": {"frames": [{"function": "main", "filename": "main.js"}]},
                }
            ]
        },
    }
    event = normalize_event(raw, received_at=1_700_000_000.0, client_ip=None)
    assert summarize(event).title == "tracebox sdk test message"
