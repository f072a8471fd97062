"""Envelope framing, exactly the grammar of the reference section 4::

    Envelope = Headers { "\\n" Item } [ "\\n" ] ;
    Item     = Headers "\\n" Payload ;

Headers are one line of JSON holding an object. An item with ``length`` has exactly that
many payload bytes, followed by ``\\n`` or the end; without it the payload runs to the
next ``\\n`` or the end. ``\\r`` belongs to the payload. Like Relay, whose JSON reader
skips whitespace before a headers value, blank (whitespace-only) lines where headers are
expected are skipped; so are blank lines at the very end, where Relay would fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from tracebox.errors import MalformedEnvelope

_NEWLINE = 0x0A
_WHITESPACE = frozenset(b" \t\r\n")


@dataclass
class Item:
    headers: dict[str, Any]  # always holds a string "type"; unknown keys are kept
    payload: bytes
    # Where the payload starts in the bytes ``parse_envelope`` framed; None when built.
    offset: int | None = field(default=None, compare=False)

    @property
    def type(self) -> str:
        item_type: str = self.headers["type"]
        return item_type


@dataclass
class Envelope:
    headers: dict[str, Any]  # unknown keys are kept
    items: list[Item]
    size: int | None = field(default=None, compare=False)  # bytes framed; None when built


def parse_envelope(data: bytes, *, max_items: int) -> Envelope:
    """Split ``data`` into headers and items. Any deviation from the grammar, and more
    than ``max_items`` items, raises ``MalformedEnvelope`` saying what and where. An
    envelope without items is valid."""
    pos = _skip_blank(data, 0)
    if pos == len(data):
        raise MalformedEnvelope("empty envelope")
    end = _line_end(data, pos)
    headers = _json_object(data[pos:end], "envelope headers")
    items: list[Item] = []
    pos = _skip_blank(data, end + 1)
    while pos < len(data):
        if len(items) == max_items:
            raise MalformedEnvelope(f"envelope has more than {max_items} items")
        item, pos = _parse_item(data, pos, len(items))
        items.append(item)
        pos = _skip_blank(data, pos)
    return Envelope(headers, items, len(data))


def serialize_envelope(envelope: Envelope) -> bytes:
    """The wire form of ``envelope``; every item header gets its ``length``."""
    parts = [orjson.dumps(envelope.headers), b"\n"]
    for item in envelope.items:
        headers = orjson.dumps({**item.headers, "length": len(item.payload)})
        parts += (headers, b"\n", item.payload, b"\n")
    return b"".join(parts)


def _parse_item(data: bytes, pos: int, index: int) -> tuple[Item, int]:
    """The item whose headers start at ``pos``, and where the next one may start."""
    end = _line_end(data, pos)
    headers = _json_object(data[pos:end], f"item {index} headers")
    if not isinstance(headers.get("type"), str):
        raise MalformedEnvelope(f"item {index} headers: 'type' must be a string")
    start = min(end + 1, len(data))
    length = headers.get("length")
    if length is None:
        end = _line_end(data, start)
        return Item(headers, data[start:end], start), end + 1
    if not isinstance(length, int) or isinstance(length, bool) or length < 0:
        raise MalformedEnvelope(f"item {index} headers: 'length' must be a non-negative integer")
    end = start + length
    if end > len(data):
        raise MalformedEnvelope(
            f"item {index}: payload truncated ({len(data) - start} of {length} bytes)"
        )
    if end < len(data) and data[end] != _NEWLINE:
        raise MalformedEnvelope(f"item {index}: payload of {length} bytes not followed by newline")
    return Item(headers, data[start:end], start), end + 1


def _line_end(data: bytes, pos: int) -> int:
    end = data.find(b"\n", pos)
    return len(data) if end < 0 else end


def _skip_blank(data: bytes, pos: int) -> int:
    while pos < len(data) and data[pos] in _WHITESPACE:
        pos += 1
    return pos


def _json_object(line: bytes, what: str) -> dict[str, Any]:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError as e:
        raise MalformedEnvelope(f"{what} are not valid JSON: {e}") from e
    if not isinstance(value, dict):
        raise MalformedEnvelope(f"{what} are not a JSON object")
    return value
