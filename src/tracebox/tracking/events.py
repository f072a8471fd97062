"""Turn a stored, normalized event (docs/design.md) into the ``Event`` record (pure).

Payloads were normalized by the digest, but they are still untrusted content: every value
is type-checked here before it reaches a response.
"""

from __future__ import annotations

from typing import Any

from tracebox.privacy import read_remarks
from tracebox.protocol.summary import EventSummary, summarize
from tracebox.tracking.models import Event, ExceptionInfo, Frame, Mechanism


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def frame(raw: dict[str, Any]) -> Frame:
    lineno = _int(raw.get("lineno"))
    context: list[tuple[int, str]] = []
    if lineno is not None and isinstance(raw.get("context_line"), str):
        pre = [line for line in _list(raw.get("pre_context")) if isinstance(line, str)]
        post = [line for line in _list(raw.get("post_context")) if isinstance(line, str)]
        context += [(lineno - len(pre) + i, line) for i, line in enumerate(pre)]
        context.append((lineno, raw["context_line"]))
        context += [(lineno + 1 + i, line) for i, line in enumerate(post)]
    in_app = raw.get("in_app")
    data = _dict(raw.get("data")) or {}
    mapped = data.get("symbolicated")
    return Frame(
        filename=_str(raw.get("filename")),
        abs_path=_str(raw.get("abs_path")),
        function=_str(raw.get("function")),
        module=_str(raw.get("module")),
        lineno=lineno,
        colno=_int(raw.get("colno")),
        in_app=in_app if isinstance(in_app, bool) else None,
        context=context,
        symbolicated=mapped if isinstance(mapped, bool) else None,
        mapping_error=_str(data.get("symbolication_error")),
        mapping_detail=_str(data.get("symbolication_detail")),
        source_map=_str(data.get("sourcemap")),
        mapped_with=_str(data.get("resolved_with")),
        vars=_dict(raw.get("vars")),
    )


def mechanism(raw: Any) -> Mechanism | None:
    """The exception's ``mechanism``; None without one (its ``type`` is required)."""
    if not isinstance(raw, dict):
        return None
    return Mechanism(
        type=_str(raw.get("type")) or "generic",
        handled=_bool(raw.get("handled")),
        synthetic=raw.get("synthetic") is True,
        description=_str(raw.get("description")),
        help_link=_str(raw.get("help_link")),
        exception_id=_int(raw.get("exception_id")),
        parent_id=_int(raw.get("parent_id")),
        is_exception_group=raw.get("is_exception_group") is True,
        source=_str(raw.get("source")),
        data=_dict(raw.get("data")),
        meta=_dict(raw.get("meta")),
    )


def frames(stacktrace: Any) -> list[Frame]:
    raw = _dict(stacktrace) or {}
    return [frame(f) for f in _list(raw.get("frames")) if isinstance(f, dict)]


def exceptions(payload: dict[str, Any]) -> list[ExceptionInfo]:
    values = _list((_dict(payload.get("exception")) or {}).get("values"))
    return [
        ExceptionInfo(
            type=_str(v.get("type")),
            value=_str(v.get("value")),
            module=_str(v.get("module")),
            frames=frames(v.get("stacktrace")),
            raw_frames=frames(v.get("raw_stacktrace")),
            mechanism=mechanism(v.get("mechanism")),
        )
        for v in values
        if isinstance(v, dict)
    ]


def main_stack_trace(payload: dict[str, Any], excs: list[ExceptionInfo]) -> list[Frame]:
    """The main (last) exception with frames, else the crashed thread's, else the
    deprecated top-level stack trace."""
    for exc in reversed(excs):
        if exc.frames:
            return exc.frames
    threads = _list((_dict(payload.get("threads")) or {}).get("values"))
    for thread in threads:
        if isinstance(thread, dict) and thread.get("crashed") and thread.get("stacktrace"):
            return frames(thread["stacktrace"])
    return frames(payload.get("stacktrace"))


def tags(payload: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (pair[0], pair[1])
        for pair in _list(payload.get("tags"))
        if isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)
    ]


def message(payload: dict[str, Any]) -> str:
    logentry = _dict(payload.get("logentry")) or {}
    return _str(logentry.get("formatted")) or _str(logentry.get("message")) or ""


def own_summary(payload: dict[str, Any]) -> EventSummary | None:
    """What this event says (title, culprit) as the digest derives it for its error; None
    for a stored payload that is not a normalized event (then the error's own apply)."""
    try:
        return summarize(payload)
    except (KeyError, TypeError, AttributeError, IndexError):
        return None


def to_event(
    payload: dict[str, Any],
    *,
    error_id: int,
    project_id: int,
    title: str,
    culprit: str,
    received_at: float,
) -> Event:
    excs = exceptions(payload)
    crumbs = _list((_dict(payload.get("breadcrumbs")) or {}).get("values"))
    return Event(
        event_id=str(payload.get("event_id", "")),
        error_id=error_id,
        project_id=project_id,
        timestamp=float(payload.get("timestamp") or received_at),
        received_at=received_at,
        level=_str(payload.get("level")) or "error",
        platform=_str(payload.get("platform")) or "other",
        environment=_str(payload.get("environment")),
        release=_str(payload.get("release")),
        logger=_str(payload.get("logger")),
        message=message(payload),
        title=title,
        culprit=culprit,
        user=_dict(payload.get("user")),
        tags=tags(payload),
        exceptions=excs,
        stack_trace=main_stack_trace(payload, excs),
        breadcrumbs=[c for c in crumbs if isinstance(c, dict)],
        request=_dict(payload.get("request")),
        contexts=_dict(payload.get("contexts")) or {},
        sdk=_dict(payload.get("sdk")),
        extra=_dict(payload.get("extra")) or {},
        scrubbed=read_remarks(payload),
    )
