"""Shape an ``Event`` for the details page (pure): stack traces newest frame first with
library frames grouped, and the event's other parts as label/value rows.

Everything here is still untrusted event content; templates escape all of it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from tracebox.tracking.models import Event, ExceptionInfo, Frame

MAX_ROWS = 200  # rows shown per section (breadcrumbs, headers, ...): a page stays readable


@dataclass(frozen=True)
class FrameView:
    location: str  # file (or module)
    function: str
    line: str  # "line 12" / "line 12:4" / ""
    in_app: bool
    context: list[tuple[int, str, bool]]  # (line number, code, is the frame's line)
    expanded: bool  # source context shown without a click (the newest in-app frame)
    minified: str = ""  # a mapped frame's minified location ("app.min.js line 1:2345")
    mapping_error: str = ""  # why source maps could not map the frame (a Failure value)
    mapping_detail: str = ""


@dataclass(frozen=True)
class FrameGroup:
    library: bool  # consecutive library frames, collapsed
    frames: list[FrameView]


@dataclass(frozen=True)
class ExceptionView:
    type: str
    value: str
    module: str
    groups: list[FrameGroup]
    frame_count: int
    main: bool  # the exception that was raised last (the chain's newest)
    has_raw: bool = False  # source maps mapped its frames; the minified ones can be shown


def exception_views(event: Event, *, raw: bool = False) -> list[ExceptionView]:
    """The exception chain, the main (newest) exception first, each with its frames
    newest first. Without exceptions, the thread or top-level stack trace. ``raw``: the
    minified frames of stack traces that source maps mapped."""
    excs = list(event.exceptions)
    if not any(e.frames for e in excs) and event.stack_trace:
        excs = [ExceptionInfo(type=None, value=None, module=None, frames=event.stack_trace)]
    views = []
    for position, exc in enumerate(reversed(excs)):
        shown = exc.raw_frames if raw and exc.raw_frames else exc.frames
        # The minified twin of each mapped frame (mapping keeps the frame count).
        twins: list[Frame | None] = list(exc.raw_frames)
        if len(twins) != len(shown):
            twins = [None] * len(shown)
        pairs = list(reversed(list(zip(shown, twins, strict=True))))
        views.append(
            ExceptionView(
                type=exc.type or ("Error" if exc.value else ""),
                value=exc.value or "",
                module=exc.module or "",
                groups=_groups(pairs, expand_first=position == 0, raw=raw),
                frame_count=len(pairs),
                main=position == 0,
                has_raw=bool(exc.raw_frames),
            )
        )
    return views


def _groups(
    frames: list[tuple[Frame, Frame | None]], *, expand_first: bool, raw: bool
) -> list[FrameGroup]:
    """Consecutive library frames collapse into one group, but only when the trace marks
    some frame in-app; a trace without in-app information shows every frame."""
    marked = any(f.in_app for f, _ in frames)
    groups: list[FrameGroup] = []
    expanded = not expand_first
    explained: set[str] = set()  # a mapping failure is explained once per stack trace
    for frame, minified in frames:
        library = marked and not frame.in_app
        expand = not expanded and not library and bool(frame.context)
        view = _frame(frame, expand=expand, minified=None if raw else minified)
        if view.mapping_detail in explained:
            view = replace(view, mapping_detail="")
        explained.add(view.mapping_detail)
        expanded = expanded or view.expanded
        if groups and groups[-1].library and library:
            groups[-1].frames.append(view)
        else:
            groups.append(FrameGroup(library=library, frames=[view]))
    return groups


def _line(frame: Frame) -> str:
    if frame.lineno is None:
        return ""
    return f"line {frame.lineno}" + (f":{frame.colno}" if frame.colno is not None else "")


def _frame(frame: Frame, *, expand: bool, minified: Frame | None = None) -> FrameView:
    line = _line(frame)
    shown_minified = ""
    if frame.symbolicated and minified is not None:
        where = minified.filename or minified.abs_path or "?"
        shown_minified = f"{where} {_line(minified)}".strip()
        if minified.function:
            shown_minified += f" in {minified.function}"
    return FrameView(
        location=frame.filename or frame.abs_path or frame.module or "<unknown>",
        function=frame.function or "?",
        line=line,
        in_app=bool(frame.in_app),
        context=[(n, code, n == frame.lineno) for n, code in frame.context],
        expanded=expand,
        minified=shown_minified,
        mapping_error=frame.mapping_error or "" if frame.symbolicated is False else "",
        mapping_detail=frame.mapping_detail or "" if frame.symbolicated is False else "",
    )


@dataclass(frozen=True)
class Crumb:
    time: Any
    category: str
    level: str
    message: str
    data: Any


def breadcrumbs(event: Event) -> list[Crumb]:
    """Newest first, as the stack trace."""
    crumbs = []
    for raw in reversed(event.breadcrumbs[-MAX_ROWS:]):
        crumbs.append(
            Crumb(
                time=raw.get("timestamp"),
                category=_text(raw.get("category")) or _text(raw.get("type")) or "default",
                level=_text(raw.get("level")) or "info",
                message=_text(raw.get("message")),
                data=raw.get("data") if raw.get("data") else None,
            )
        )
    return crumbs


def rows(value: Any) -> list[tuple[str, Any]]:
    """A mapping (or a list of pairs, as headers are stored) as label/value rows."""
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = [(p[0], p[1]) for p in value if isinstance(p, list | tuple) and len(p) == 2]
    else:
        return []
    return [(str(k), v) for k, v in items[:MAX_ROWS] if v not in (None, "", [], {})]


def request_rows(request: dict[str, Any] | None) -> list[tuple[str, Any]]:
    if not request:
        return []
    order = ("method", "url", "query_string", "data", "cookies", "env", "fragment")
    found = [(k, request[k]) for k in order if request.get(k) not in (None, "", [], {})]
    return found + [(k, v) for k, v in rows(request) if k not in (*order, "headers")]


def context_sections(contexts: dict[str, Any]) -> list[tuple[str, list[tuple[str, Any]]]]:
    sections = []
    for name, value in list(contexts.items())[:MAX_ROWS]:
        found = rows(value) if isinstance(value, dict) else [("value", value)]
        if found:
            sections.append((str(name), found))
    return sections


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
