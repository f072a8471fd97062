"""The same error groups the same across builds and deploys, on every SDK platform; a
different error does not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.grouping.samples import SAMPLES, Event, Frame, Sample, frame
from tracebox.grouping import calculate

Mutation = Callable[[Event, Sample], None]


def _frames(event: Event) -> list[Frame]:
    frames: list[Frame] = event["exception"]["values"][-1]["stacktrace"]["frames"]
    return frames


def _main(event: Event) -> dict[str, Any]:
    main: dict[str, Any] = event["exception"]["values"][-1]
    return main


def _crash_index(event: Event) -> int:
    """Index of the newest in-app frame."""
    return max(i for i, f in enumerate(_frames(event)) if f["in_app"])


def _shift_lines(event: Event, _: Sample) -> None:
    for f in _frames(event):
        f["lineno"] += 7
        f["colno"] = f.get("colno", 1) + 3


def _redeploy(event: Event, sample: Sample) -> None:
    for f in _frames(event):
        for key in ("abs_path", "filename"):
            if key in f:
                f[key] = f[key].replace(sample.deploy, "9.9.9-rc.1")
    event["release"] = f"shop@{sample.deploy}".replace(sample.deploy, "9.9.9-rc.1")


def _change_value(event: Event, _: Sample) -> None:
    _main(event)["value"] = "something else for id 7f3a: 'xyz' at 2024-06-01"


def _change_context_lines(event: Event, _: Sample) -> None:
    for f in _frames(event):
        f["context_line"] = "        # reformatted " + f["context_line"].strip()


def _change_library_frame(event: Event, _: Sample) -> None:
    library = next(f for f in _frames(event) if not f["in_app"])
    library["function"] += "Internal"
    for key in ("module", "filename", "abs_path"):
        if key in library:
            library[key] = library[key].replace(".", "_v2.", 1)


def _add_library_frame(event: Event, _: Sample) -> None:
    wrapper = frame("wrapped", 12, False, module="lib.middleware", filename="middleware.x")
    _frames(event).insert(_crash_index(event), wrapper)


def _recurse(event: Event, _: Sample) -> None:
    frames = _frames(event)
    crash = frames[_crash_index(event)]
    frames.insert(_crash_index(event), {**crash, "lineno": crash["lineno"] + 40})


def _move_addresses(event: Event, _: Sample) -> None:
    for f in _frames(event):
        f["instruction_addr"] = hex(int(f.get("instruction_addr", "0x1000"), 16) + 0x2000)


def _rename_function(event: Event, _: Sample) -> None:
    _frames(event)[_crash_index(event)]["function"] = "renamedFunction"


def _change_type(event: Event, _: Sample) -> None:
    _main(event)["type"] = "OtherError"


def _add_in_app_frame(event: Event, _: Sample) -> None:
    crash = _frames(event)[_crash_index(event)]
    _frames(event).append({**crash, "function": "validate", "lineno": 3})


def _remove_in_app_frame(event: Event, _: Sample) -> None:
    del _frames(event)[_crash_index(event)]


SAME: list[tuple[str, Mutation]] = [
    ("line and column numbers", _shift_lines),
    ("deploy directory and version in paths", _redeploy),
    ("exception value", _change_value),
    ("context lines", _change_context_lines),
    ("library frame changed", _change_library_frame),
    ("library frame added", _add_library_frame),
    ("deeper recursion", _recurse),
    ("instruction addresses", _move_addresses),
]
DIFFERENT: list[tuple[str, Mutation]] = [
    ("in-app function renamed", _rename_function),
    ("exception type", _change_type),
    ("in-app frame added", _add_in_app_frame),
    ("in-app frame removed", _remove_in_app_frame),
]


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.platform)
def test_components_of_each_platform(sample: Sample) -> None:
    # The hash is the md5 of these (test_grouping_properties), so if this fails, results
    # changed: bump GROUPING_VERSION.
    assert calculate(sample.copy()).components == sample.components


@pytest.mark.parametrize("change, mutate", SAME, ids=[name for name, _ in SAME])
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.platform)
def test_same_error_groups_together(sample: Sample, change: str, mutate: Mutation) -> None:
    event = sample.copy()
    mutate(event, sample)
    assert event != sample.event, f"mutation {change!r} changed nothing"
    assert calculate(event).hash == calculate(sample.copy()).hash


@pytest.mark.parametrize("change, mutate", DIFFERENT, ids=[name for name, _ in DIFFERENT])
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.platform)
def test_different_error_groups_apart(sample: Sample, change: str, mutate: Mutation) -> None:
    event = sample.copy()
    mutate(event, sample)
    assert calculate(event).hash != calculate(sample.copy()).hash


def _with_cause(sample: Sample, cause_type: str) -> Event:
    """The sample raised while handling a cause (Python ``raise ... from``, Java "Caused
    by", Go wrapped errors): the cause comes first, the main exception last."""
    event = sample.copy()
    cause = {**_main(event), "type": cause_type, "value": "connection reset by peer"}
    event["exception"]["values"].insert(0, cause)
    return event


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.platform)
def test_every_link_of_a_chain_contributes(sample: Sample) -> None:
    chained = calculate(_with_cause(sample, "ConnectionError"))
    own = sample.components[1:]
    cause = [*own[:-1], "ConnectionError"]
    assert chained.components == ["exception", *cause, *own]
    assert chained.hash != calculate(sample.copy()).hash
    assert chained.hash != calculate(_with_cause(sample, "TimeoutError")).hash
    assert chained.hash == calculate(_with_cause(sample, "ConnectionError")).hash
