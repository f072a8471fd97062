"""Errors of the REST surface that the base hierarchy (``tracebox.errors``) leaves open."""

from __future__ import annotations

from tracebox.errors import BadRequest, Forbidden, TraceboxError


class InvalidParameter(BadRequest):
    """A missing or malformed request parameter; REST renders GitLab's
    ``{"error": "<field> is missing"}``. The message starts with the field name."""


class InsufficientScope(Forbidden):
    """A token without the scope the request needs (``read_api`` on a write)."""

    def __init__(self, required: str) -> None:
        super().__init__("insufficient_scope")
        self.required = required


class Conflict(TraceboxError):
    """The resource already exists (a member, a username, a project path)."""

    status_code = 409
