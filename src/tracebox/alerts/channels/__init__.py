"""One module per channel. Chat and webhook channels turn a ``Message`` into a JSON
body (``body(message, ...)``); email composes and sends a MIME message over SMTP."""

from __future__ import annotations


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"
