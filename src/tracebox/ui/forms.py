"""Form bodies: bounded, URL-encoded only (every UI form posts
``application/x-www-form-urlencoded``; no multipart parser is needed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from starlette.requests import Request

from tracebox.errors import BadRequest, PayloadTooLarge

MAX_FIELDS = 200
MAX_VALUE_CHARS = 10_000


@dataclass(frozen=True)
class Form:
    fields: dict[str, list[str]] = field(default_factory=dict)

    def get(self, name: str, default: str = "") -> str:
        values = self.fields.get(name)
        return values[0] if values else default

    def text(self, name: str) -> str:
        """A one-line value, stripped; NUL characters refused (PostgreSQL cannot hold them)."""
        value = self.get(name).strip()
        if "\x00" in value:
            raise BadRequest(f"{name} is invalid")
        return value

    def all(self, name: str) -> list[str]:
        return list(self.fields.get(name, []))

    def checked(self, name: str) -> bool:
        return self.get(name) in ("1", "on", "true")


async def read_form(request: Request, limit: int) -> Form:
    """Parse a URL-encoded body of at most ``limit`` bytes."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    body = await _read_body(request, limit)
    if not body:
        return Form()
    if kind != "application/x-www-form-urlencoded":
        raise BadRequest("forms must be sent as application/x-www-form-urlencoded")
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except (UnicodeDecodeError, ValueError) as e:
        raise BadRequest("the form could not be read") from e
    fields: dict[str, list[str]] = {}
    for name, value in pairs:
        fields.setdefault(name, []).append(value[:MAX_VALUE_CHARS])
    return Form(fields)


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge("the form is too large")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge("the form is too large")
        chunks.append(chunk)
    return b"".join(chunks)
