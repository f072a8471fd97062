"""SDK and runtime frames are never in-app nor the culprit; a message's synthetic stack
names no culprit (issue 12, item 9)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tracebox.grouping import calculate
from tracebox.grouping.inapp import is_sdk_frame, mark_sdk_frames
from tracebox.protocol.event import normalize_event, summarize

RUST_PANIC = Path(__file__).with_name("sdk_events") / "rust-panic-0.49.5.json"
NOW = 1_795_436_716.0
REGISTRY = "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f"


def _normalized(raw: dict[str, Any]) -> dict[str, Any]:
    return normalize_event(raw, received_at=NOW, client_ip=None)


def _frames(event: dict[str, Any]) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = event["exception"]["values"][-1]["stacktrace"]["frames"]
    return frames


def test_a_real_rust_panic_is_blamed_on_the_function_that_panicked() -> None:
    # What sentry-rust 0.49.5's panic integration sent for a panic in validate_quantity
    # (tests/sdk/rust/panic-0.49.5): it marks some of its own frames in-app.
    event = _normalized(json.loads(RUST_PANIC.read_text()))
    raw_culprit = summarize(event).culprit
    assert raw_culprit == "event_from_panic_info"  # the bug: the SDK's frame
    mark_sdk_frames(event)
    summary = summarize(event)
    assert summary.culprit == "tracebox_sdk_test_rust_panic::validate_quantity"
    in_app = [f["function"] for f in _frames(event) if f.get("in_app")]
    assert not any("sentry" in f or f.startswith(("std::", "core::")) for f in in_app)
    assert "tracebox_sdk_test_rust_panic::validate_quantity" in in_app
    components = calculate(event).components
    assert "tracebox_sdk_test_rust_panic::validate_quantity" in " ".join(components)
    assert not any("sentry_panic" in c or "event_from_panic_info" in c for c in components)


@pytest.mark.parametrize(
    ("platform", "frame"),
    [
        ("python", {"module": "sentry_sdk.integrations.logging", "function": "emit"}),
        ("python", {"module": "sentry_sdk", "function": "capture_exception"}),
        ("python", {"abs_path": "/venv/lib/python3.12/site-packages/sentry_sdk/api.py"}),
        ("node", {"filename": "/app/node_modules/@sentry/core/build/cjs/exports.js"}),
        ("javascript", {"module": "@sentry/browser", "function": "captureMessage"}),
        ("go", {"module": "github.com/getsentry/sentry-go", "function": "(*Hub).CaptureException"}),
        ("java", {"module": "io.sentry.Sentry", "function": "captureException"}),
        ("php", {"module": "Sentry\\State\\Hub", "function": "captureException"}),
        ("native", {"function": "sentry_core::api::with_integration"}),
        ("native", {"function": "<sentry_panic::PanicIntegration as Integration>::setup"}),
        ("native", {"function": "std::panicking::begin_panic_handler"}),
        ("native", {"function": "__rustc::rust_begin_unwind", "package": "__rustc"}),
        ("native", {"function": "f", "abs_path": f"{REGISTRY}/sentry-core-0.49.5/src/hub.rs"}),
        ("native", {"function": "catch_unwind<x>", "abs_path": "/rustc/5980/library/std/x.rs"}),
    ],
)
def test_sdk_and_runtime_frames_are_recognised(platform: str, frame: dict[str, Any]) -> None:
    assert is_sdk_frame(frame, platform)


@pytest.mark.parametrize(
    ("platform", "frame"),
    [
        ("python", {"module": "sentry_app.views", "function": "handle"}),  # not the SDK
        ("python", {"module": "__main__", "function": "validate_quantity"}),
        ("node", {"filename": "/app/src/sentry-helpers.js", "function": "report"}),
        ("go", {"module": "main", "function": "validateQuantity"}),
        ("java", {"module": "io.sentrytools.App", "function": "run"}),
        ("native", {"function": "shop::db::get", "package": "shop"}),
        ("native", {"function": "sentryish::run"}),
        ("python", {"function": "std::panicking::x"}),  # a native rule, not Python's
    ],
)
def test_application_frames_are_not_taken_for_the_sdk(platform: str, frame: dict[str, Any]) -> None:
    assert not is_sdk_frame(frame, platform)


def test_sdk_frames_marked_in_app_by_the_sdk_are_not_in_app_any_more() -> None:
    event = _normalized(
        {
            "platform": "python",
            "exception": {
                "values": [
                    {
                        "type": "ValueError",
                        "value": "bad",
                        "stacktrace": {
                            "frames": [
                                {"module": "app.views", "function": "handle", "in_app": True},
                                {"module": "sentry_sdk.api", "function": "wrap", "in_app": True},
                            ]
                        },
                    }
                ]
            },
        }
    )
    before = calculate(copy.deepcopy(event)).components
    mark_sdk_frames(event)
    assert [f["in_app"] for f in _frames(event)] == [True, False]
    assert summarize(event).culprit == "app.views in handle"
    assert calculate(event).components != before
    assert "sentry_sdk.api:wrap" not in calculate(event).components


def _browser_message(mechanism: dict[str, Any] | None) -> dict[str, Any]:
    exception: dict[str, Any] = {
        "value": "checkout button clicked twice",
        "stacktrace": {
            "frames": [
                {"filename": "https://shop.example/app.min.js", "function": "onClick"},
                {"filename": "https://shop.example/vendor.min.js", "function": "e"},
            ]
        },
    }
    if mechanism is not None:
        exception["mechanism"] = mechanism
    return {
        "platform": "javascript",
        "message": "checkout button clicked twice",
        "exception": {"values": [exception]},
        "request": {"url": "https://shop.example/cart"},
    }


@pytest.mark.parametrize(
    "mechanism",
    [{"type": "generic", "synthetic": True, "handled": True}, None],
    ids=["browser-8-synthetic", "browser-7-typeless"],
)
def test_a_captured_messages_synthetic_stack_names_no_culprit(
    mechanism: dict[str, Any] | None,
) -> None:
    event = _normalized(_browser_message(mechanism))
    mark_sdk_frames(event)
    summary = summarize(event)
    assert summary.title == "checkout button clicked twice"
    assert summary.culprit == "https://shop.example/cart"  # not "e(vendor.min.js)"


def test_a_native_crash_with_a_synthetic_type_keeps_its_culprit() -> None:
    # sentry-native: the signal handler makes up the type, the stack is the crash's.
    event = _normalized(
        {
            "platform": "native",
            "exception": {
                "values": [
                    {
                        "type": "SIGSEGV",
                        "mechanism": {"type": "signalhandler", "synthetic": True},
                        "stacktrace": {"frames": [{"function": "main"}, {"function": "crash"}]},
                    }
                ]
            },
        }
    )
    mark_sdk_frames(event)
    assert summarize(event).culprit == "crash"
