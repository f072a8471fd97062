"""The exception chain as grouping components (Sentry's exception strategy, reference
section 8 "Exception")."""

from __future__ import annotations

from tracebox.grouping._fields import Fields, child, exceptions, frames, text
from tracebox.grouping.frames import stack_components
from tracebox.grouping.message import normalize_message


def exception_components(event: Fields) -> list[str]:
    """``["exception", ...]`` over every link of the chain, oldest first; [] when no link
    contributes anything.

    Each link contributes its frames (see ``stack_components``), then its type. Its value
    contributes, normalized like a message, only when its frames contribute nothing: as
    in Sentry, a stack trace takes precedence over the value, which usually holds ids.
    """
    platform = text(event, "platform") or "other"
    components: list[str] = []
    for exception in exceptions(event):
        components.extend(_link_components(exception, platform))
    return ["exception", *components] if components else []


def _link_components(exception: Fields, platform: str) -> list[str]:
    components = stack_components(frames(exception), platform)
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
