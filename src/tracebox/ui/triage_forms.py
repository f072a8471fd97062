"""Triage forms as the changes they ask for (status with its conditions); bad values
are a 400 with the field's name, as the API's."""

from __future__ import annotations

from tracebox.errors import BadRequest
from tracebox.models import ErrorStatus
from tracebox.tracking.models import Resolution, StatusChange
from tracebox.ui.forms import Form


def status_change(form: Form) -> StatusChange:
    """``status``; with ``resolution`` (now, in_next_release, in_release + ``release``)
    or ``ignore_minutes`` / ``ignore_count`` / ``ignore_user_count``."""
    try:
        status = ErrorStatus(form.get("status"))
    except ValueError as e:
        raise BadRequest("status is invalid") from e
    resolution = Resolution.NOW
    if status is ErrorStatus.RESOLVED and form.get("resolution"):
        try:
            resolution = Resolution(form.get("resolution"))
        except ValueError as e:
            raise BadRequest("resolution is invalid") from e
    ignoring = status is ErrorStatus.IGNORED
    return StatusChange(
        status=status,
        resolution=resolution,
        release=form.text("release") or None if resolution is Resolution.IN_RELEASE else None,
        ignore_minutes=_number(form, "ignore_minutes") if ignoring else None,
        ignore_count=_number(form, "ignore_count") if ignoring else None,
        ignore_user_count=_number(form, "ignore_user_count") if ignoring else None,
    )


def _number(form: Form, name: str) -> int | None:
    value = form.text(name)
    if not value:
        return None
    if not (value.isascii() and value.isdigit()) or len(value) > 10:
        raise BadRequest(f"{name} is invalid: give a whole number")
    return int(value)
