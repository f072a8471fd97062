"""Stack frames as grouping components.

A frame contributes ``"<module or file>:<function>"``. Sentry's rules (reference section 8):
the module takes precedence over the file name; a file name contributes only its base
name, lowercased; line and column numbers, absolute paths (they hold deploy directories
and versions) and addresses never contribute.
"""

from __future__ import annotations

from tracebox.grouping._fields import Fields, frames, main_exception, text
from tracebox.grouping.names import memoized, normalize_function, normalize_module

# File names that say nothing about the code (Sentry ignores `<anonymous>` and
# `[native code]`; V8 prints `native` for built-ins).
_MEANINGLESS_FILES = frozenset({"<anonymous>", "[native code]", "native", "<unknown>"})
_MISSING = "?"


def stack_components(stack: list[Fields], platform: str) -> list[str]:
    """One component per contributing frame, oldest first.

    Only in-app frames contribute (Sentry's "app" variant); a stack without any frame
    marked ``in_app: true`` contributes all its frames (the "system" variant). A frame
    whose component equals the one before it is dropped, as Sentry drops directly
    recursive frames; comparing components rather than raw frames also absorbs a
    recursion depth that varies between events.
    """
    in_app = [frame for frame in stack if frame.get("in_app") is True]
    components: list[str] = []
    for frame in in_app or stack:
        component = frame_component(frame, platform)
        if component is not None and (not components or components[-1] != component):
            components.append(component)
    return components


def frame_component(frame: Fields, platform: str) -> str | None:
    """``"<location>:<function>"`` with ``?`` for a missing half; None when both are missing
    (a frame known only by its address)."""
    where = location(frame)
    function = frame_function(frame, platform)
    if where is None and function is None:
        return None
    return f"{where or _MISSING}:{function or _MISSING}"


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
