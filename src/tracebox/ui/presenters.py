"""Shape an ``Event`` for the details page (pure): stack traces newest frame first with
library frames grouped, and the event's other parts as label/value rows.

Everything here is still untrusted event content; templates escape all of it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import orjson

from tracebox.tracking.models import Event, ExceptionInfo, Frame, Mechanism

MAX_ROWS = 200  # rows shown per section (breadcrumbs, headers, ...): a page stays readable
MAX_VARS = 100  # local variables shown per frame
MAX_VALUE_CHARS = 2000  # one variable or additional-data value, before "… (n more)"
MAX_TREE_DEPTH = 16  # exception groups nested deeper are shown at this depth


@dataclass(frozen=True)
class ValueRow:
    """A name and its value as text: strings as sent, anything else as indented JSON,
    cut at ``MAX_VALUE_CHARS`` (``cut`` says how many characters were left out)."""

    name: str
    text: str
    cut: int = 0


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
    vars: tuple[ValueRow, ...] = ()  # local variables, at most MAX_VARS
    vars_count: int = 0  # how many the SDK sent


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
    mechanism: Mechanism | None = None
    depth: int = 0  # nesting in an exception group's tree (0: the root or a plain chain)
    relation: str = ""  # "Caused by", "In exception group #0", or "" for the first shown

    @property
    def unhandled(self) -> bool:
        return self.mechanism is not None and self.mechanism.handled is False

    @property
    def help_link(self) -> str:
        """The mechanism's help link when it is a web address (never ``javascript:``)."""
        link = self.mechanism.help_link if self.mechanism is not None else None
        return link if link and link.lower().startswith(("https://", "http://")) else ""


def exception_views(event: Event, *, raw: bool = False) -> list[ExceptionView]:
    """The exception chain, the main (newest) exception first, each with its frames
    newest first; an exception group as a tree (``mechanism.exception_id`` and
    ``parent_id``), each group followed by its members. Without exceptions, the thread
    or top-level stack trace. ``raw``: the minified frames of stack traces that source
    maps mapped."""
    excs = list(event.exceptions)
    if not any(e.frames for e in excs) and event.stack_trace:
        excs = [ExceptionInfo(type=None, value=None, module=None, frames=event.stack_trace)]
    placed = _tree(excs) or [(exc, 0, "Caused by" if n else "") for n, exc in _newest(excs)]
    return [
        _exception_view(exc, depth=depth, relation=relation, main=position == 0, raw=raw)
        for position, (exc, depth, relation) in enumerate(placed)
    ]


def _newest(excs: list[ExceptionInfo]) -> list[tuple[int, ExceptionInfo]]:
    return list(enumerate(reversed(excs)))


def _tree(excs: list[ExceptionInfo]) -> list[tuple[ExceptionInfo, int, str]]:
    """Exceptions in tree order (each followed by its members, depth first), or [] when
    the SDK sent no tree. The roots (no parent, or a parent not sent) come main first."""
    ids = {
        x.mechanism.exception_id: x
        for x in excs
        if x.mechanism is not None and x.mechanism.exception_id is not None
    }
    if not ids:
        return []
    children: dict[int, list[ExceptionInfo]] = {}
    roots: list[ExceptionInfo] = []
    for exc in reversed(excs):
        parent = exc.mechanism.parent_id if exc.mechanism is not None else None
        own = exc.mechanism.exception_id if exc.mechanism is not None else None
        if parent is not None and parent in ids and parent != own:
            children.setdefault(parent, []).append(exc)
        else:
            roots.append(exc)
    placed: list[tuple[ExceptionInfo, int, str]] = []
    seen: set[int] = set()

    def visit(exc: ExceptionInfo, depth: int, relation: str) -> None:
        if id(exc) in seen:
            return  # a cycle in what the SDK sent
        seen.add(id(exc))
        placed.append((exc, min(depth, MAX_TREE_DEPTH), relation))
        own = exc.mechanism.exception_id if exc.mechanism is not None else None
        members = sorted(children.get(own, []) if own is not None else [], key=_exception_id)
        for member in members:
            visit(member, depth + 1, f"In exception group #{own}")

    for root in roots:
        visit(root, 0, "")
    for exc in reversed(excs):  # members of a cycle (no root): shown, never dropped
        visit(exc, 0, "")
    return placed


def _exception_id(exc: ExceptionInfo) -> int:
    mechanism = exc.mechanism
    return mechanism.exception_id or 0 if mechanism is not None else 0


def _exception_view(
    exc: ExceptionInfo, *, depth: int, relation: str, main: bool, raw: bool
) -> ExceptionView:
    shown = exc.raw_frames if raw and exc.raw_frames else exc.frames
    # The minified twin of each mapped frame (mapping keeps the frame count).
    twins: list[Frame | None] = list(exc.raw_frames)
    if len(twins) != len(shown):
        twins = [None] * len(shown)
    pairs = list(reversed(list(zip(shown, twins, strict=True))))
    return ExceptionView(
        type=exc.type or ("Error" if exc.value else ""),
        value=exc.value or "",
        module=exc.module or "",
        groups=_groups(pairs, expand_first=main, raw=raw),
        frame_count=len(pairs),
        main=main,
        has_raw=bool(exc.raw_frames),
        mechanism=exc.mechanism,
        depth=depth,
        relation=relation,
    )


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
        vars=tuple(value_rows(frame.vars, limit=MAX_VARS)),
        vars_count=len(frame.vars or {}),
    )


def value_rows(value: dict[str, Any] | None, *, limit: int = MAX_ROWS) -> list[ValueRow]:
    """Named values (local variables, additional data) as text rows, in the SDK's order."""
    if not value:
        return []
    return [_value_row(str(name), v) for name, v in list(value.items())[:limit]]


def _value_row(name: str, value: Any) -> ValueRow:
    if isinstance(value, str):
        text = value
    else:
        try:
            text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
        except (TypeError, orjson.JSONEncodeError):
            text = repr(value)
    if len(text) <= MAX_VALUE_CHARS:
        return ValueRow(name, text)
    return ValueRow(name, text[:MAX_VALUE_CHARS], cut=len(text) - MAX_VALUE_CHARS)


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
