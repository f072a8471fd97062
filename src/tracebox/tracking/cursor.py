"""Keyset cursors in Sentry's grammar, ``value:offset:is_prev`` (reference section 10).

Tracebox puts the sort value of the row at the page edge in ``value`` and that row's id
in ``offset``: ``1767225600.25:42:0`` means "rows after (last_seen 1767225600.25, id
42)"; ``is_prev`` 1 means "rows before it". Sentry's own clients and GitLab's pass the
string back untouched, so the grammar is all they need.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tracebox.errors import InvalidParameter
from tracebox.models import MAX_ID

MAX_CURSOR_LENGTH = 100


@dataclass(frozen=True)
class Cursor:
    value: float
    id: int
    is_prev: bool

    def encode(self) -> str:
        value = int(self.value) if self.value.is_integer() else self.value
        return f"{value!r}:{self.id}:{int(self.is_prev)}"


def decode(text: str | None) -> Cursor | None:
    if not text:
        return None
    parts = text.split(":") if len(text) <= MAX_CURSOR_LENGTH else []
    try:
        value, row_id, is_prev = float(parts[0]), int(parts[1]), int(parts[2])
    except (IndexError, ValueError) as e:
        raise InvalidParameter("cursor is invalid") from e
    if len(parts) != 3 or not math.isfinite(value) or abs(value) > 1e15:
        raise InvalidParameter("cursor is invalid")
    if not 0 <= row_id <= MAX_ID or is_prev not in (0, 1):
        raise InvalidParameter("cursor is invalid")
    return Cursor(value, row_id, bool(is_prev))
