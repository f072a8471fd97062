"""Frames without a function name (top-level script code) group by their source line, as
Sentry's grouping does on its context-line platforms (grouping version ``tracebox:2``),
and every event also carries the previous version's hash, so an error grouped under
``tracebox:1`` keeps receiving its events."""

from __future__ import annotations

import copy
from typing import Any

from tests.protocol.real_samples import SAMPLES, SCENARIOS, receive_program
from tracebox.grouping import GROUPING_VERSION, PREVIOUS_VERSION, calculate
from tracebox.grouping.exception import uses_context_lines


def php_warnings() -> list[dict[str, Any]]:
    """The real sentry-php 4.29.0 events: two warnings at lines 48 and 49 of run.php."""
    events = receive_program(SCENARIOS / "php-4.29.0-warnings").events
    assert len(events) == 2
    for event in events:
        [frame] = event["exception"]["values"][-1]["stacktrace"]["frames"]
        assert "function" not in frame and frame["context_line"]  # what the SDK sends
    return events


def test_two_php_warnings_of_one_script_are_two_errors() -> None:
    first, second = (calculate(e) for e in php_warnings())
    assert GROUPING_VERSION == "tracebox:2" and PREVIOUS_VERSION == "tracebox:1"
    assert first.hash != second.hash
    assert first.components[
        1
    ] == "/run.php:?:$total = file_get_contents('/nonexistent/tracebox-input.txt');".replace(
        "/run.php", "run.php"
    )
    assert second.components[1] == "run.php:?:echo $undefined_total;"


def test_the_previous_version_hash_is_the_one_old_errors_were_keyed_by() -> None:
    """Under tracebox:1 both warnings made one error (the bug); both events still name
    that hash as their fallback, so the old error keeps receiving them."""
    first, second = (calculate(e) for e in php_warnings())
    assert first.fallback_hashes == second.fallback_hashes
    [old] = first.fallback_hashes
    assert old not in (first.hash, second.hash)
    without_lines = [copy.deepcopy(e) for e in php_warnings()]
    for event in without_lines:  # what tracebox:1 saw: no source line contributed
        for frame in event["exception"]["values"][-1]["stacktrace"]["frames"]:
            frame.pop("context_line")
    assert {calculate(e).hash for e in without_lines} == {old}


def test_frames_with_functions_keep_their_hash() -> None:
    """Real Python and Node exceptions (every frame has a function): no fallback, since
    the previous version gave the same hash."""
    for program in ("python-2.75.0", "python-1.21.0", "node-11.12.0", "java-8.62.0"):
        for event in receive_program(SAMPLES / program).events:
            if "exception" not in event:
                continue
            assert not uses_context_lines(event), program
            assert calculate(event).fallback_hashes == (), program


def module_level(platform: str, line: str, **frame: Any) -> dict[str, Any]:
    frames = [{"filename": "app/job.py", "lineno": 3, "context_line": line, "in_app": True}]
    frames[0].update(frame)
    exc = {"type": "Error", "value": "x", "stacktrace": {"frames": frames}}
    return {"platform": platform, "exception": {"values": [exc]}}


def test_which_platforms_and_lines_count() -> None:
    def distinct(platform: str, a: str, b: str, **frame: Any) -> bool:
        one = calculate(module_level(platform, a, **frame))
        two = calculate(module_level(platform, b, **frame))
        return one.hash != two.hash

    for platform in ("python", "php", "ruby", "javascript", "node"):
        assert distinct(platform, "run()", "stop()"), platform
    assert not distinct("java", "run();", "stop();")  # not a context-line platform
    assert not distinct("python", "x" * 121, "y" * 121)  # too long: minified or generated
    assert distinct("python", "x" * 120, "y" * 120)  # at the limit it counts
    assert not distinct("python", "run()", "stop()", function="main")  # the function decides
    url = "https://cdn.example.com/app.min.js"
    assert not distinct("javascript", "a()", "b()", abs_path=url)  # a bundle served from a URL
    assert calculate(module_level("python", "  run(\t1)  ")).components[1] == (
        "job.py:?:run( 1)"  # whitespace collapsed, tabs as Sentry expands them
    )
