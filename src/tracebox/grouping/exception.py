"""The exception chain as grouping components (Sentry's exception strategy, reference
section 8 "Exception")."""

from __future__ import annotations

from tracebox.grouping._fields import Fields, child, exceptions, frames, text
from tracebox.grouping.frames import context_line, frame_function, stack_components
from tracebox.grouping.message import normalize_message


def exception_components(
    event: Fields, *, context_lines: bool = True, lines_used: list[bool] | None = None
) -> list[str]:
    """``["exception", ...]`` over every link of the chain, oldest first; [] when no link
    contributes anything.

    Each link contributes its frames (see ``stack_components``), then its type. Its value
    contributes, normalized like a message, only when its frames contribute nothing: as
    in Sentry, a stack trace takes precedence over the value, which usually holds ids.
    ``context_lines``, ``lines_used``: see ``frames.stack_components``.
    """
    platform = text(event, "platform") or "other"
    components: list[str] = []
    for exception in exceptions(event):
        components.extend(_link_components(exception, platform, context_lines, lines_used))
    return ["exception", *components] if components else []


def uses_context_lines(event: Fields) -> bool:
    """Whether some frame of the chain contributes its source line (``tracebox:2``)."""
    platform = text(event, "platform") or "other"
    return any(
        frame_function(frame, platform) is None and context_line(frame, platform) is not None
        for exception in exceptions(event)
        for frame in frames(exception)
    )


def _link_components(
    exception: Fields, platform: str, context_lines: bool, lines_used: list[bool] | None
) -> list[str]:
    components = stack_components(
        frames(exception), platform, context_lines=context_lines, lines_used=lines_used
    )
    has_frames = bool(components)
    exception_type = text(exception, "type")
    # A synthetic type is made up by the SDK (e.g. from a signal), not by the code, so it
    # says nothing about the error: Sentry ignores it too.
    if exception_type is not None and child(exception, "mechanism").get("synthetic") is not True:
        components.append(exception_type)
    if not has_frames:
        value = text(exception, "value")
        normalized = normalize_message(value) if value is not None else ""
        if normalized:
            components.append(normalized)
    return components
