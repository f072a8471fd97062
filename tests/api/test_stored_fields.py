"""What SDKs send, in both APIs (issue 12, item 1): frame variables, the mechanism,
additional data; /api/0 in Sentry's own field names."""

from __future__ import annotations

from typing import Any

from tests.inprocess import Api, exception_event


def rich_event() -> dict[str, Any]:
    event = exception_event("ValueError", "invalid quantity: 7", extra={"order_id": 12})
    main = event["exception"]["values"][-1]
    main["stacktrace"]["frames"][-1]["vars"] = {"quantity": "7", "password": "[Filtered]"}
    main["mechanism"] = {"type": "excepthook", "handled": False, "meta": {"errno": {"number": 2}}}
    return event


def test_v4_event_has_vars_mechanism_extra_and_handled(api: Api) -> None:
    owner = api.user("owner")
    project = api.project("acme/web", owner)
    api.events(project, rich_event())
    token = api.token(owner)
    base = f"/api/v4/projects/{project.id}/error_tracking/errors"
    (error,) = api.call("GET", base, token).json()
    assert error["unhandled"] is True
    event = api.call("GET", f"{base}/{error['id']}/events/latest", token).json()
    main = event["exceptions"][-1]
    assert main["stack_trace"][-1]["vars"] == {"quantity": "7", "password": "[Filtered]"}
    assert main["stack_trace"][0]["vars"] is None
    assert main["mechanism"]["type"] == "excepthook"
    assert main["mechanism"]["handled"] is False
    assert main["mechanism"]["meta"] == {"errno": {"number": 2}}
    assert (event["handled"], event["extra"]) == (False, {"order_id": 12})
    details = api.call("GET", f"{base}/{error['id']}", token).json()
    assert details["latest_event"]["stack_trace"][-1]["vars"]["quantity"] == "7"


def test_sentry_api_event_has_vars_mechanism_and_context(api: Api) -> None:
    owner = api.user("owner")
    project = api.project("acme/web", owner)
    api.events(project, rich_event())
    auth = {"Authorization": f"Bearer {api.token(owner)}"}
    (issue,) = api.client.get("/api/0/projects/acme/web/issues/", headers=auth).json()
    assert issue["isUnhandled"] is True
    event = api.client.get(f"/api/0/issues/{issue['id']}/events/latest/", headers=auth).json()
    (entry,) = [e for e in event["entries"] if e["type"] == "exception"]
    main = entry["data"]["values"][-1]
    assert main["stacktrace"]["frames"][-1]["vars"] == {"quantity": "7", "password": "[Filtered]"}
    assert main["mechanism"] == {
        "type": "excepthook",
        "handled": False,
        "synthetic": False,
        "is_exception_group": False,
        "meta": {"errno": {"number": 2}},
    }
    assert event["context"] == {"order_id": 12}
