"""Frames of the Sentry SDKs and of language runtimes' panic machinery: never in-app.

An SDK that captures an error from inside itself (Rust's panic hook, a logging
integration, an event processor) puts its own frames on top of the stack. When the
application's frames are not marked in-app (Rust marks none), the newest frame names
the culprit, and the error would read ``sentry_panic::PanicIntegration::event_from_panic_info``
instead of the application function that panicked. Sentry does the same with its
built-in stack trace rules (``family:native function:std::* -app`` and the SDK ones).

``mark_sdk_frames`` runs in the digest before grouping and the summary, so the stored
event, the culprit, grouping and the UI's library frames all agree. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any

from tracebox.grouping._fields import Fields, child, exceptions, frames, mappings, text

# Native (Rust, C++) code of the SDK crates and of the runtime's panic, unwind and
# start-up machinery, by function (`<std::...>` is a trait impl of such a type), by the
# crate sentry-rust names in `package`, or by source path: the Rust standard library's
# (`/rustc/<commit>/library/`) and the SDK crates' in cargo's registry. sentry-rust
# 0.49 marks some of its own frames in-app (`event_from_panic_info`, `with_active<..>`),
# and those have only their path to tell.
_RUNTIME_CRATES = r"std|core|alloc|backtrace|panic_unwind|__rustc"
_NATIVE_SDK_FUNCTION = re.compile(
    rf"^<?(?:sentry(?:_[a-z_]+)?|{_RUNTIME_CRATES})::"
    r"|^(?:rust_begin_unwind|rust_panic|__rust_[a-z_]+|__libc_start_\w+|_start)$"
)
_NATIVE_SDK_PACKAGE = re.compile(rf"^(?:sentry(?:_[a-z_]+)?|{_RUNTIME_CRATES})$")
_NATIVE_SDK_PATH = re.compile(
    r"^/rustc/[0-9a-f]+/library/|/registry/src/[^/]+/(?:sentry(?:-[a-z]+)*|backtrace)-\d"
)
_NATIVE_PLATFORMS = frozenset({"native", "rust", "c", "cocoa", "objc"})
# Module prefixes of the SDKs, per platform (module names as those SDKs send them).
_SDK_MODULES: dict[str, tuple[str, ...]] = {
    "python": ("sentry_sdk.", "raven."),
    "java": ("io.sentry.",),
    "go": ("github.com/getsentry/sentry-go",),
    "php": ("Sentry\\",),
    "csharp": ("Sentry.",),
}
_SDK_MODULE_NAMES = frozenset({"sentry_sdk", "raven"})
# Path fragments of installed SDK packages (JavaScript bundles name files, not modules).
_SDK_PATHS = (
    "/node_modules/@sentry/",
    "/node_modules/@sentry-internal/",
    "/site-packages/sentry_sdk/",
    "/site-packages/raven/",
    "/gems/sentry-ruby",
    "/github.com/getsentry/sentry-go",
)


def is_sdk_frame(frame: Fields, platform: str) -> bool:
    """Whether ``frame`` belongs to a Sentry SDK or to the runtime's panic machinery.
    ``platform`` is the event's; the frame's own wins when it has one."""
    platform = text(frame, "platform") or platform
    function = text(frame, "function") or text(frame, "raw_function") or ""
    if platform in _NATIVE_PLATFORMS and _native_sdk_frame(frame, function):
        return True
    module = text(frame, "module") or ""
    if module in _SDK_MODULE_NAMES or module.startswith(_SDK_MODULES.get(platform, ())):
        return True
    if module.startswith(("@sentry/", "@sentry-internal/")):
        return True
    path = text(frame, "abs_path") or text(frame, "filename") or ""
    return any(fragment in path for fragment in _SDK_PATHS)


def _native_sdk_frame(frame: Fields, function: str) -> bool:
    if _NATIVE_SDK_FUNCTION.match(function):
        return True
    if _NATIVE_SDK_PACKAGE.match(text(frame, "package") or ""):
        return True
    return bool(_NATIVE_SDK_PATH.search(text(frame, "abs_path") or ""))


def mark_sdk_frames(event: dict[str, Any]) -> None:
    """Set ``in_app: false`` on every SDK and runtime frame of ``event`` (a normalized
    event, changed in place)."""
    platform = text(event, "platform") or "other"
    stacks = [*exceptions(event), *mappings(child(event, "threads").get("values")), event]
    for stack in stacks:
        for frame in frames(stack):
            # Decoded JSON: always a dict; a Mapping is left alone.
            if (
                frame.get("in_app") is not False
                and isinstance(frame, dict)
                and is_sdk_frame(frame, platform)
            ):
                frame["in_app"] = False
