"""Pure parts of the UI: charts, stack trace presentation, throttling, cookie signing."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import WEB_WORKER, modules_loaded
from tracebox.tracking.models import Bucket, Event, ExceptionInfo, Frame
from tracebox.ui.charts import bar_chart
from tracebox.ui.presenters import breadcrumbs, exception_views, rows
from tracebox.ui.render import timeago
from tracebox.ui.sessions import Session, Signer
from tracebox.ui.throttle import SigninThrottle


def frame(function: str, in_app: bool | None, lineno: int = 1) -> Frame:
    return Frame(
        filename=f"{function}.py", abs_path=None, function=function, module=None,
        lineno=lineno, colno=None, in_app=in_app, context=[(lineno, f"{function}()")],
    )  # fmt: skip


def event(excs: list[ExceptionInfo], crumbs: list[dict[str, object]] | None = None) -> Event:
    return Event(
        event_id="e" * 32, error_id=1, project_id=1, timestamp=0.0, received_at=0.0,
        level="error", platform="python", environment=None, release=None, logger=None,
        message="", title="t", culprit="", user=None, tags=[], exceptions=excs,
        stack_trace=excs[-1].frames if excs else [], breadcrumbs=crumbs or [],
    )  # fmt: skip


def test_bar_chart_scales_to_the_busiest_bucket() -> None:
    chart = bar_chart([Bucket(0, 0), Bucket(3600, 5), Bucket(7200, 10)], width=30, height=11)
    assert [b.height for b in chart.bars] == [1.0, 5.0, 10.0]
    assert chart.total == 15 and chart.peak == 10
    assert chart.bars[2].label == "1970-01-01 02:00 UTC: 10 events"
    assert "15 events in the last 3 hours" in chart.summary
    empty = bar_chart([Bucket(0, 0)] * 24, width=120, height=28)
    assert {b.height for b in empty.bars} == {1.0} and empty.peak == 0


def test_frames_newest_first_with_library_frames_grouped() -> None:
    exc = ExceptionInfo(
        type="ValueError",
        value="bad",
        module=None,
        frames=[
            frame("main", True),
            frame("lib_a", False),
            frame("lib_b", False),
            frame("raise_it", True),
        ],
    )
    cause = ExceptionInfo(type="KeyError", value="k", module=None, frames=[frame("lookup", True)])
    views = exception_views(event([cause, exc]))
    assert [v.type for v in views] == ["ValueError", "KeyError"]
    assert views[0].main and not views[1].main
    groups = views[0].groups
    assert [(g.library, [f.function for f in g.frames]) for g in groups] == [
        (False, ["raise_it"]),
        (True, ["lib_b", "lib_a"]),
        (False, ["main"]),
    ]
    assert groups[0].frames[0].expanded and not groups[2].frames[0].expanded
    assert not views[1].groups[0].frames[0].expanded  # only the main exception opens one


def test_traces_without_in_app_information_are_not_collapsed() -> None:
    exc = ExceptionInfo(
        type="E", value=None, module=None, frames=[frame("a", None), frame("b", None)]
    )
    (view,) = exception_views(event([exc]))
    assert [g.library for g in view.groups] == [False, False]


def test_breadcrumbs_newest_first_and_rows_of_pairs() -> None:
    crumbs = breadcrumbs(event([], [{"message": "old"}, {"message": "new", "level": 5}]))
    assert [c.message for c in crumbs] == ["new", "old"]
    assert crumbs[0].level == "info"  # a non-string level from an event is ignored
    assert rows([["Accept", "x"], ["bad"], ["Empty", ""]]) == [("Accept", "x")]
    assert rows("not a mapping") == []


def test_timeago() -> None:
    assert timeago(1000.0, now=1030.0) == "just now"
    assert timeago(0.0, now=7200.0) == "2 hours ago"
    assert timeago(0.0, now=86400.0 * 40) == "1 month ago"
    assert timeago(None) == "never"


def test_throttle_locks_a_username_and_an_address() -> None:
    clock = [0.0]
    throttle = SigninThrottle(
        max_per_user=3, max_per_address=5, window_seconds=60, clock=lambda: clock[0]
    )
    for _ in range(3):
        assert throttle.retry_after("Ann", "10.0.0.1") == 0
        throttle.failed("ann", "10.0.0.1")
    assert throttle.retry_after("ANN", "10.0.0.9") == 60  # per username, any case
    assert throttle.retry_after("bob", "10.0.0.1") == 0
    throttle.failed("bob", "10.0.0.1")
    throttle.failed("cy", "10.0.0.1")
    assert throttle.retry_after("dan", "10.0.0.1") == 60  # the address is locked too
    clock[0] = 61.0
    assert throttle.retry_after("ann", "10.0.0.1") == 0


def test_signed_sessions_refuse_tampering() -> None:
    signer = Signer(b"secret")
    session = Session(nonce="n1")
    session.sign_in(7, "hash", now=100.0)
    session.flash("notice", "hello")
    cookie = signer.dumps(session)
    loaded = signer.loads(cookie)
    assert (loaded.user_id, loaded.issued_at, loaded.flashes) == (7, 100.0, [("notice", "hello")])
    body, mac = cookie.split(".")
    assert signer.loads(body[:-2] + "xx." + mac).user_id is None
    assert Signer(b"other").loads(cookie).user_id is None
    assert signer.loads("garbage").user_id is None
    token = signer.csrf_token(loaded)
    assert signer.csrf_valid(loaded, token) and not signer.csrf_valid(Session(nonce="n2"), token)


def test_a_web_worker_loads_the_markdown_parser_and_symbolic_on_first_use(
    tmp_path: Path,
) -> None:
    """Every web worker's memory counts toward the server's 250 MB (issue 10): the
    comments' Markdown parser loads with the first comment shown, and symbolic (source
    maps, parsed by the digest alone) never."""
    assert modules_loaded(WEB_WORKER, ("markdown_it", "symbolic"), tmp_path / "data") == []
