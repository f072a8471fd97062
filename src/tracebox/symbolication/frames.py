"""Writing a mapping result into a frame (pure)."""

from __future__ import annotations

from typing import Any, Protocol

from tracebox.symbolication import urls

MAX_CONTEXT_LINE_CHARS = 500  # a longer source line is cut (minified code in sourcesContent)
_NO_FUNCTION = frozenset({"<unknown>", ""})


class Token(Protocol):
    """What symbolic's SourceMapCache lookup returns."""

    line: int
    col: int
    src: str | None
    name: str | None
    function_name: str | None
    context_line: str | None
    pre_context: list[str]
    post_context: list[str]


def apply_token(
    frame: dict[str, Any], token: Token, *, map_url: str, resolved_with: str, sourcemap: str
) -> None:
    """Replace the frame's minified location with the original one from ``token``;
    ``map_url`` is where the map lives (its ``sources`` are relative to it)."""
    assert token.src is not None
    frame["abs_path"] = urls.resolve(map_url, token.src)
    frame["filename"] = urls.source_filename(token.src)
    frame["lineno"], frame["colno"] = token.line, token.col
    function = token.function_name if token.function_name not in _NO_FUNCTION else None
    if function is not None:
        frame["function"] = function
    frame.pop("module", None)  # the minified module names the bundle, not the source file
    frame.pop("raw_function", None)
    if token.context_line is not None:
        frame["context_line"] = _line(token.context_line)
        frame["pre_context"] = [_line(x) for x in token.pre_context]
        frame["post_context"] = [_line(x) for x in token.post_context]
    else:
        for key in ("context_line", "pre_context", "post_context"):
            frame.pop(key, None)
    if "/node_modules/" in frame["abs_path"] or frame["filename"].startswith("node_modules/"):
        frame["in_app"] = False  # as Sentry: dependencies are not the application
    frame["data"] = {
        "symbolicated": True,
        "resolved_with": resolved_with,
        "sourcemap": sourcemap,
    }


def mark_failed(frame: dict[str, Any], failure: str, detail: str) -> None:
    frame["data"] = {
        "symbolicated": False,
        "symbolication_error": failure,
        "symbolication_detail": detail,
    }


def _line(text: str) -> str:
    text = text.rstrip("\r\n")
    return text if len(text) <= MAX_CONTEXT_LINE_CHARS else text[:MAX_CONTEXT_LINE_CHARS] + "…"
