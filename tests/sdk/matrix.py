"""What every SDK program must have produced on the server, checked through the REST API.

Each program (tests/sdk/<language>/...) captures ``invalid quantity: 7`` raised in
validate_quantity <- process_order <- handle_request (TRACEBOX_REPEAT times, same code
path), the message ``tracebox sdk test message`` at level warning, and, where the SDK
supports release health, a session. ``Expected`` says how each language names those;
``check_*`` compare what the API shows and return problems (empty: the check passed), so
that one run reports every failing check of a program, not only the first.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from tests.sdk.api_client import ErrorTrackingClient

VALUE = "invalid quantity: 7"
MESSAGE = "tracebox sdk test message"
USER = "user-42"
T = TypeVar("T")


@dataclass(frozen=True)
class Expected:
    exception_type: str
    culprit: str
    functions: tuple[str, str, str]  # handle_request, process_order, validate_quantity
    sessions: int  # sessions counted in release health; 0 when the program sends none

    @property
    def title(self) -> str:
        return f"{self.exception_type}: {VALUE}"


# language: exception type, culprit ({f}: the raising function), function naming
LANGUAGES = {
    "go": ("*main.InvalidQuantityError", "main in {f}", "camel"),
    "java": ("IllegalArgumentException", "tracebox.SdkTest in {f}", "camel"),
    "node": ("RangeError", "{f}(main)", "camel"),
    "php": ("InvalidArgumentException", "{root}/tests/sdk/php/replay.php in {f}", "snake"),
    "python": ("ValueError", "__main__ in {f}", "snake"),
    "ruby": ("ArgumentError", "tests/sdk/ruby/{version}/main.rb in {f}", "snake"),
    "rust": ("InvalidQuantityError", "{f}", "snake"),  # native: the function alone
}
# Sessions counted per run: Python sends an application-mode session and a request-mode
# aggregate; sentry-go and sentry-php have no release health; the others one session.
SESSIONS = {"python": 2, "go": 0, "php": 0}


def expected_for(program: dict[str, Any], root: Path) -> Expected:
    """The error each program's exception must become, in its language's own words."""
    language = program["language"]
    exception_type, culprit, naming = LANGUAGES[language]
    if naming == "camel":
        functions = ("handleRequest", "processOrder", "validateQuantity")
    else:
        # Rust names native frames by path: <crate>::<function>
        crate = Path(program["artifact"]).name.replace("-", "_")
        prefix = f"{crate}::" if language == "rust" else ""
        functions = (
            f"{prefix}handle_request",
            f"{prefix}process_order",
            f"{prefix}validate_quantity",
        )
    culprit = culprit.format(f=functions[-1], root=root, version=program["version"])
    return Expected(exception_type, culprit, functions, SESSIONS.get(language, 1))


@dataclass
class Snapshot:
    """What the REST API shows for one project."""

    errors: list[dict[str, Any]]
    releases: list[dict[str, Any]]

    def by_type(self, exception_type: str) -> list[dict[str, Any]]:
        return [e for e in self.errors if e["type"] == exception_type]

    def by_title(self, title: str) -> list[dict[str, Any]]:
        return [e for e in self.errors if e["title"] == title]

    def session_count(self) -> int:
        return sum(r["sessions"] for r in self.releases)

    def errored_count(self) -> int:
        return sum(r["errored"] for r in self.releases)


def snapshot(api: ErrorTrackingClient, project_id: int) -> Snapshot:
    return Snapshot(api.errors(project_id), api.releases(project_id))


def is_complete(snap: Snapshot, expected: Expected, repeat: int) -> bool:
    """Everything the program sent has been digested (or will never be). A session's
    update that marks it errored may come in a later envelope than its start, and be
    digested in a later batch (up to ``TRACEBOX_DIGEST_BATCH_INTERVAL_MS`` later)."""
    exceptions = snap.by_type(expected.exception_type)
    return (
        sum(e["events_count"] for e in snap.errors) >= repeat + 1
        and (not exceptions or exceptions[0]["events_count"] >= repeat)
        and snap.session_count() >= expected.sessions
        and snap.errored_count() >= min(expected.sessions, 1)
    )


def check_exception(snap: Snapshot, expected: Expected) -> list[str]:
    """The exception became an error with the right type, value, title and culprit."""
    found = snap.by_type(expected.exception_type)
    if len(found) != 1:
        return [f"{len(found)} errors of type {expected.exception_type!r}: {_titles(snap)}"]
    error = found[0]
    want = {
        "title": expected.title,
        "value": VALUE,
        "culprit": expected.culprit,
        "level": "error",
    }
    return [
        f"{field} is {error[field]!r}, expected {value!r}"
        for field, value in want.items()
        if error[field] != value
    ]


def check_grouping(
    snap: Snapshot, expected: Expected, api: ErrorTrackingClient, project_id: int, ids: list[str]
) -> list[str]:
    """The exceptions sent from one code path are one error holding every event."""
    found = snap.by_type(expected.exception_type)
    if len(found) != 1:
        return [f"the exceptions made {len(found)} errors, expected 1: {_titles(snap)}"]
    error = found[0]
    problems = []
    stored = sorted(e["event_id"] for e in api.events(project_id, error["id"]))
    if stored != sorted(ids):
        problems.append(f"events {stored}, expected the printed {sorted(ids)}")
    if (error["events_count"], error["users_count"]) != (len(ids), 1):
        problems.append(
            f"events_count {error['events_count']}, users_count {error['users_count']}, "
            f"expected {len(ids)}, 1"
        )
    if len(snap.errors) != 2:
        problems.append(f"{len(snap.errors)} errors in the project, expected 2: {_titles(snap)}")
    return problems


def latest_exception_event(
    snap: Snapshot, expected: Expected, api: ErrorTrackingClient, project_id: int
) -> dict[str, Any] | None:
    found = snap.by_type(expected.exception_type)
    return api.latest_event(project_id, found[0]["id"]) if len(found) == 1 else None


def check_frames(event: dict[str, Any] | None, expected: Expected) -> list[str]:
    """In-app frames are present and in call order, the raising function last."""
    if event is None:
        return ["no single error to read frames from"]
    in_app = [f["function"] for f in event["stack_trace"] if f["in_app"]]
    positions = [_index(in_app, name) for name in expected.functions]
    problems = []
    if None in positions or positions != sorted(positions):
        problems.append(f"in-app functions {in_app} lack {list(expected.functions)} in order")
    if not in_app or in_app[-1] != expected.functions[-1]:
        problems.append(f"the last in-app frame is not {expected.functions[-1]!r}: {in_app}")
    return problems


def check_event(
    event: dict[str, Any] | None, program: dict[str, Any], release: str, environment: str
) -> list[str]:
    """The event keeps the SDK's name and version, the user, release and environment."""
    if event is None:
        return ["no single error to read the event from"]
    sdk, user = event.get("sdk") or {}, event.get("user") or {}
    seen = (sdk.get("name"), sdk.get("version"), user.get("id"))
    want = (program["sdk_name"], program["version"], USER)
    problems = [] if seen == want else [f"sdk name, version, user id {seen}, expected {want}"]
    if (event["release"], event["environment"]) != (release, environment):
        problems.append(f"release, environment {event['release']!r}, {event['environment']!r}")
    return problems


def _index(names: list[str], name: str) -> int | None:
    return names.index(name) if name in names else None


def check_message(
    snap: Snapshot, api: ErrorTrackingClient, project_id: int, message_id: str
) -> list[str]:
    """The message is stored as its own error, titled by its text, at level warning."""
    found = snap.by_title(MESSAGE)
    if len(found) != 1:
        return [f"{len(found)} errors titled {MESSAGE!r}: {_titles(snap)}"]
    error, problems = found[0], []
    if (error["level"], error["events_count"]) != ("warning", 1):
        problems.append(f"level {error['level']!r}, {error['events_count']} events")
    event = api.latest_event(project_id, error["id"])
    if (event["event_id"], event["message"]) != (message_id, MESSAGE):
        problems.append(f"latest event {event['event_id']} says {event['message']!r}")
    return problems


def check_sessions(snap: Snapshot, expected: Expected, release: str, environment: str) -> list[str]:
    """The sessions are counted in release health, for the release and environment sent."""
    rows = [
        (r["release"], r["environment"], r["sessions"], r["errored"], r["crashed"])
        for r in snap.releases
    ]
    # Every program captures its exceptions inside its session: exactly one is errored.
    want = [(release, environment, expected.sessions, 1, 0)] if expected.sessions else []
    return [] if rows == want else [f"release health {rows}, expected {want}"]


def _titles(snap: Snapshot) -> list[str]:
    return [f"{e['title']} ({e['events_count']})" for e in snap.errors]


METRIC_LINE = re.compile(
    r'^tracebox_items_accepted_total\{endpoint="(?P<endpoint>\w+)",type="event"\} (?P<n>[0-9.]+)$'
)


def events_by_endpoint(metrics_text: str) -> dict[str, int]:
    """Events the server counted per ingest endpoint, from ``/-/metrics``."""
    counts: dict[str, int] = {}
    for line in metrics_text.splitlines():
        if match := METRIC_LINE.match(line):
            counts[match["endpoint"]] = int(float(match["n"]))
    return counts


def settle(fetch: Callable[[], T], done: Callable[[T], bool], timeout: float = 30.0) -> T:
    """Poll ``fetch()`` until ``done`` says so or ``timeout`` passes; the last value either
    way, so that the checks report precisely what is missing."""
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.05)
