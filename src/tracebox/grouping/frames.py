"""Stack frames as grouping components.

A frame contributes ``"<module or file>:<function>"``. Sentry's rules (reference section 8):
the module takes precedence over the file name; a file name contributes only its base
name, lowercased; line and column numbers, absolute paths (they hold deploy directories
and versions) and addresses never contribute.

A frame without a function (top-level script code: PHP's ``run.php``, a Python module
body) would say only its file, so two different errors raised at different lines of one
script became one. On the platforms whose source lines Sentry trusts for grouping
(``contextline_platforms``: JavaScript, Node, Python, PHP, Ruby), such a frame
contributes its source line instead: ``"run.php:?:echo $total;"``, whitespace collapsed,
not when longer than 120 characters, nor for a JavaScript frame served from a URL (a
minified bundle's line changes with every build). Frames with a function are unchanged,
so errors made of them keep their hash across the version that added this (``tracebox:2``).
"""

from __future__ import annotations

from tracebox.grouping._fields import Fields, frames, main_exception, text
from tracebox.grouping.names import memoized, normalize_function, normalize_module

# File names that say nothing about the code (Sentry ignores `<anonymous>` and
# `[native code]`; V8 prints `native` for built-ins).
_MEANINGLESS_FILES = frozenset({"<anonymous>", "[native code]", "native", "<unknown>"})
_MISSING = "?"
# Platforms whose context lines Sentry uses in grouping (its ``contextline_platforms``).
CONTEXT_LINE_PLATFORMS = frozenset({"javascript", "node", "python", "php", "ruby"})
MAX_CONTEXT_LINE_CHARS = 120  # longer lines are minified code: as Sentry, never grouped on


def stack_components(
    stack: list[Fields],
    platform: str,
    *,
    context_lines: bool = True,
    lines_used: list[bool] | None = None,
) -> list[str]:
    """One component per contributing frame, oldest first.

    Only in-app frames contribute (Sentry's "app" variant); a stack without any frame
    marked ``in_app: true`` contributes all its frames (the "system" variant). A frame
    whose component equals the one before it is dropped, as Sentry drops directly
    recursive frames; comparing components rather than raw frames also absorbs a
    recursion depth that varies between events. ``context_lines=False`` gives the
    components of grouping version ``tracebox:1``, which never used source lines.
    ``lines_used``, when given, gets a ``True`` for each frame that contributed its line.
    """
    in_app = [frame for frame in stack if frame.get("in_app") is True]
    components: list[str] = []
    for frame in in_app or stack:
        component, line_used = _frame_component(frame, platform, context_lines)
        if component is not None and (not components or components[-1] != component):
            components.append(component)
        if line_used and lines_used is not None:
            lines_used.append(True)
    return components


def frame_component(frame: Fields, platform: str, *, context_lines: bool = True) -> str | None:
    """``"<location>:<function>"`` with ``?`` for a missing half; None when both are missing
    (a frame known only by its address). Without a function, the source line joins as a
    third part where the platform allows it (see the module's docstring)."""
    return _frame_component(frame, platform, context_lines)[0]


def _frame_component(frame: Fields, platform: str, context_lines: bool) -> tuple[str | None, bool]:
    """``frame_component``, and whether the source line is part of it."""
    where = location(frame)
    function = frame_function(frame, platform)
    if function is not None:
        return f"{where or _MISSING}:{function}", False
    line = context_line(frame, platform) if context_lines else None
    if where is None and line is None:
        return None, False
    component = f"{where or _MISSING}:{_MISSING}"
    return (component, False) if line is None else (f"{component}:{line}", True)


def context_line(frame: Fields, platform: str) -> str | None:
    """The frame's source line as Sentry groups on it, or None where it must not count."""
    frame_platform = text(frame, "platform") or platform
    raw = text(frame, "context_line")
    if raw is None or frame_platform not in CONTEXT_LINE_PLATFORMS:
        return None
    if len(raw) > MAX_CONTEXT_LINE_CHARS:
        return None
    if frame_platform in ("javascript", "node") and _from_url(frame):
        return None
    return " ".join(raw.expandtabs(2).split()) or None


def _from_url(frame: Fields) -> bool:
    path = text(frame, "abs_path") or text(frame, "filename") or ""
    return path.lower().startswith(("http://", "https://"))


def location(frame: Fields) -> str | None:
    """The frame's normalized module, else its file's lowercased base name."""
    module = text(frame, "module")
    if module is not None:
        return normalize_module(module)
    filename = text(frame, "filename") or text(frame, "abs_path")
    return None if filename is None else file_basename(filename)


def frame_function(frame: Fields, platform: str) -> str | None:
    """The frame's normalized function name, or None. The frame's own platform, when it
    has one, overrides the event's ``platform`` (React Native mixes JavaScript and
    native frames in one event)."""
    function = text(frame, "function") or text(frame, "raw_function")
    if function is None:
        return None
    return normalize_function(function, text(frame, "platform") or platform)


@memoized
def file_basename(filename: str) -> str | None:
    """The lowercased base name of a path or URL, or None when it must not contribute.

    A web URL (``https://cdn.example.com/js/main.3f2a9c.js``) does not contribute, as in
    Sentry ("ignored because frame points to a URL"): bundles carry a content hash that
    changes with every deploy. Other schemes (``app:///dist/users.js``,
    ``webpack://shop/./src/users.js``) contribute the base name of their path; a URL
    that is only a host contributes nothing.
    """
    path = filename
    if "://" in path:
        scheme, _, path = path.partition("://")
        if scheme.lower() in ("http", "https") or "/" not in path:
            return None
    if "?" in path or "#" in path:
        path = path.partition("?")[0].partition("#")[0]
    base = path.rpartition("/")[2].rpartition("\\")[2].strip()
    if not base or base in _MEANINGLESS_FILES:
        return None
    return base.lower()


def crash_frame(event: Fields) -> Fields | None:
    """The frame the event crashed in: the newest in-app frame of the main exception's
    stack (else its newest frame); the deprecated top-level ``stacktrace`` when the main
    exception has none."""
    exception = main_exception(event)
    stack = frames(exception) if exception is not None else []
    if not stack:
        stack = frames(event)
    for frame in reversed(stack):
        if frame.get("in_app") is True:
            return frame
    return stack[-1] if stack else None
