"""LoggedCondition: one line when a condition starts, reminders with counts, one when it ends."""

from __future__ import annotations

import logging

import pytest

from tracebox.logs import LoggedCondition


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_flood_of_failures_logs_start_reminders_and_end(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    condition = LoggedCondition(
        logging.getLogger("t"), "disk nearly full", reminder_seconds=60, clock=clock
    )
    caplog.set_level(logging.INFO, "t")
    condition.cleared()  # nothing to end
    for _ in range(1000):  # 1000 refusals within a second: one line
        condition.occurred("free 10 MiB")
    assert [r.getMessage() for r in caplog.records] == ["disk nearly full: free 10 MiB"]
    assert condition.active

    clock.now += 61
    condition.occurred("free 9 MiB")
    clock.now += 30
    condition.occurred("free 9 MiB")  # too soon for another reminder
    clock.now += 60
    condition.cleared()
    condition.cleared()
    messages = [r.getMessage() for r in caplog.records]
    assert messages[1:] == [
        "disk nearly full for 61 s (1001 times since it started, 1001 in the last 61 s): "
        "free 9 MiB",
        "disk nearly full: over after 151 s (1002 times)",
    ]
    assert not condition.active

    condition.occurred("again")  # a new episode starts with a new line and new counts
    clock.now += 1
    condition.cleared()
    assert [r.getMessage() for r in caplog.records][3:] == [
        "disk nearly full: again",
        "disk nearly full: over after 1 s (1 times)",
    ]


def test_the_start_line_can_carry_the_traceback(caplog: pytest.LogCaptureFixture) -> None:
    condition = LoggedCondition(logging.getLogger("t"), "digest batch failed")
    caplog.set_level(logging.INFO, "t")
    for _ in range(3):
        try:
            raise ValueError("boom")
        except ValueError:
            condition.occurred("boom", traceback=True)
    assert len(caplog.records) == 1
    assert caplog.records[0].exc_info is not None
