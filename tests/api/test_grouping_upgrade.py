"""A grouping version bump splits no existing error: events of an error grouped under
``tracebox:1`` keep arriving there (the digest finds it by ``Grouping.fallback_hashes``),
while a project without such errors gets the new version's errors. Real sentry-php
4.29.0 events: two warnings at two lines of one top-level script."""

from __future__ import annotations

import copy
from typing import Any

from tests.grouping.test_grouping_context_lines import php_warnings
from tests.inprocess import Api
from tracebox.grouping import calculate


def as_tracebox_1(event: dict[str, Any]) -> dict[str, Any]:
    """The event as grouping tracebox:1 saw it: its frames' source lines did not count."""
    old = copy.deepcopy(event)
    for frame in old["exception"]["values"][-1]["stacktrace"]["frames"]:
        frame.pop("context_line", None)
    assert calculate(old).hash == calculate(event).fallback_hashes[0]
    return old


def errors(api: Api, project_id: int, token: str) -> list[dict[str, Any]]:
    url = f"/api/v4/projects/{project_id}/error_tracking/errors?status=all"
    found: list[dict[str, Any]] = api.call("GET", url, token).json()
    return found


def test_old_errors_keep_their_events_new_projects_get_two(api: Api) -> None:
    owner = api.user()
    token = api.token(owner)
    first, second = php_warnings()
    old_project = api.project("acme/old", owner)
    api.events(old_project, {**as_tracebox_1(first), "event_id": "0" * 32})  # made before
    api.events(old_project, first, second)
    [kept] = errors(api, old_project.id, token)
    assert kept["events_count"] == 3  # the old error received both new events

    new_project = api.project("acme/new", owner)
    api.events(new_project, first, second)
    values = sorted(e["value"] for e in errors(api, new_project.id, token))
    assert values == [
        "Warning: Undefined variable $undefined_total",
        "Warning: file_get_contents(/nonexistent/tracebox-input.txt): Failed to open stream: "
        "No such file or directory",
    ]
