"""What SDKs send, on the details page (issue 12, item 1): local variables (escaped,
truncated, collapsible), the mechanism with "unhandled" shown prominently, additional
data, and exception groups as a tree."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.inprocess import Ui, exception_event
from tracebox.models import Project
from tracebox.tracking.models import Event, ExceptionInfo, Mechanism
from tracebox.ui.presenters import MAX_VALUE_CHARS, exception_views, value_rows

SCRIPT = "<script>alert('vars')</script>"


@pytest.fixture
def project(ui: Ui) -> Project:
    """acme/web, its owner signed in."""
    owner = ui.user("owner")
    ui.sign_in(owner)
    return ui.project("acme/web", owner)


def details_page(ui: Ui) -> str:
    listing = ui.client.get("/acme/web/-/error_tracking").text
    error_id = re.findall(r'/-/error_tracking/(\d+)"', listing)[0]
    page = ui.client.get(f"/acme/web/-/error_tracking/{error_id}")
    assert page.status_code == 200
    return page.text


def with_vars(event: dict[str, Any], **variables: Any) -> dict[str, Any]:
    event["exception"]["values"][-1]["stacktrace"]["frames"][-1]["vars"] = variables
    return event


def test_local_variables_are_escaped_truncated_and_collapsible(ui: Ui, project: Project) -> None:
    long = "x" * (MAX_VALUE_CHARS + 500)
    event = with_vars(
        exception_event(),
        quantity="7",
        order={"id": 12, "items": ["a", "b"]},
        note=SCRIPT,
        blob=long,
        password="[Filtered]",
    )
    ui.events(project, event)
    page = details_page(ui)
    assert SCRIPT not in page  # never rendered as markup
    assert "&lt;script&gt;alert(&#39;vars&#39;)&lt;/script&gt;" in page
    assert '<details class="frame-vars" open>' in page  # the crash frame's, opened
    assert "Local variables (5)" in page
    assert '<th scope="row" class="mono">quantity</th>' in page
    assert "&#34;items&#34;: [" in page  # a dict as indented JSON
    assert "… (500 more characters)" in page
    assert "x" * (MAX_VALUE_CHARS + 1) not in page
    assert "[Filtered]" in page  # privacy scrubbing's mark, shown as is
    assert "5 vars" in page


def test_unhandled_mechanism_and_additional_data(ui: Ui, project: Project) -> None:
    event = exception_event(extra={"order_id": 12, "cart": {"total": "9.99"}, "html": SCRIPT})
    event["exception"]["values"][-1]["mechanism"] = {
        "type": "excepthook",
        "handled": False,
        "help_link": "javascript:alert(1)",
    }
    ui.events(project, event)
    page = details_page(ui)
    assert ">Unhandled</span>" in page
    listing = ui.client.get("/acme/web/-/error_tracking").text
    assert "title=\"An event's exception reached no handler" in listing
    assert 'badge-danger">unhandled</span> <span class="muted">mechanism</span>' in page
    assert '<span class="mono">excepthook</span>' in page
    assert "javascript:alert" not in page  # a help link only when it is a web address
    assert 'id="extra-title">Additional data</h2>' in page
    assert '<th scope="row" class="mono">order_id</th>' in page
    assert "&#34;total&#34;: &#34;9.99&#34;" in page
    assert SCRIPT not in page


def test_a_handled_exception_is_not_marked_unhandled(ui: Ui, project: Project) -> None:
    event = exception_event()
    event["exception"]["values"][-1]["mechanism"] = {"type": "generic", "handled": True}
    ui.events(project, event)
    page = details_page(ui)
    assert ">Unhandled</span>" not in page
    assert 'badge-neutral">handled</span>' in page


def test_an_exception_group_is_a_tree(ui: Ui, project: Project) -> None:
    # As sentry-python 2.x sends ExceptionGroup("two failures", [ValueError, KeyError]):
    # members first, the group (exception_id 0) last.
    def exc(type_: str, value: str, **mechanism: Any) -> dict[str, Any]:
        return {"type": type_, "value": value, "mechanism": {"type": "chained", **mechanism}}

    event = exception_event()
    event["exception"]["values"] = [
        exc("KeyError", "'sku'", exception_id=2, parent_id=0, source="exceptions[1]"),
        exc("ValueError", "bad quantity", exception_id=1, parent_id=0, source="exceptions[0]"),
        exc(
            "ExceptionGroup",
            "two failures (2 sub-exceptions)",
            exception_id=0,
            is_exception_group=True,
            handled=False,
        ),
    ]
    ui.events(project, event)
    page = details_page(ui)
    order = re.findall(r'class="exc-type">([^<]+)<', page)
    assert order == ["ExceptionGroup", "ValueError", "KeyError"]
    assert page.count("In exception group #0") == 2
    assert "Caused by" not in page
    assert 'class="exception exception-member" style="--depth: 1"' in page


def _exc(type_: str, eid: int | None = None, parent: int | None = None) -> ExceptionInfo:
    mechanism = Mechanism(type="chained", exception_id=eid, parent_id=parent)
    return ExceptionInfo(type=type_, value="v", module=None, frames=[], mechanism=mechanism)


def _event(excs: list[ExceptionInfo]) -> Event:
    return Event(
        event_id="e" * 32, error_id=1, project_id=1, timestamp=0.0, received_at=0.0,
        level="error", platform="python", environment=None, release=None, logger=None,
        message="", title="t", culprit="", user=None, tags=[], exceptions=excs, stack_trace=[],
    )  # fmt: skip


def test_nested_groups_keep_their_depth_and_a_cycle_ends() -> None:
    views = exception_views(
        _event([_exc("C", 2, 1), _exc("B", 1, 0), _exc("Other", 3, 0), _exc("A", 0)])
    )
    assert [(v.type, v.depth) for v in views] == [("A", 0), ("B", 1), ("C", 2), ("Other", 1)]
    looped = exception_views(_event([_exc("X", 1, 2), _exc("Y", 2, 1)]))
    assert [(v.type, v.depth) for v in looped] == [("Y", 0), ("X", 1)]


def test_a_plain_chain_still_reads_caused_by() -> None:
    views = exception_views(_event([_exc("KeyError"), _exc("ValueError")]))
    assert [(v.type, v.relation) for v in views] == [("ValueError", ""), ("KeyError", "Caused by")]


def test_value_rows_keep_order_and_bound_each_value() -> None:
    rows = value_rows({"b": 1, "a": "x" * (MAX_VALUE_CHARS + 3), "c": None}, limit=2)
    assert [(r.name, r.cut) for r in rows] == [("b", 0), ("a", 3)]
    assert rows[0].text == "1"
