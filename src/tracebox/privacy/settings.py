"""A project's privacy settings (issue 11): pure values, validated where they are built."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from tracebox.errors import BadRequest
from tracebox.privacy.rules import normalize_key

# Bounds on the two name lists. Sentry sets none that it documents; these keep a project's
# compiled rules small (every name becomes a branch of one regular expression).
MAX_FIELD_NAMES = 100  # names per list
MAX_FIELD_NAME_CHARS = 100  # characters per name
MIN_FIELD_NAME_CHARS = 2  # a one-letter name would filter half of every event


class IpMode(StrEnum):
    """What is kept of an IP address in ``user.ip_address``, ``request.env`` (REMOTE_ADDR
    and the forwarding variables) and the forwarding request headers."""

    STORE = "store"
    ANONYMIZE = "anonymize"  # IPv4 last octet and IPv6 last 80 bits set to zero
    DROP = "drop"


class InvalidSetting(BadRequest):
    """A privacy setting out of its bounds; the message names the setting."""


@dataclass(frozen=True)
class PrivacySettings:
    """Defaults are what every project gets until a Maintainer changes them."""

    scrub_data: bool = True  # the default rules and the additional sensitive fields
    sensitive_fields: tuple[str, ...] = ()  # additional names, matched as the defaults
    safe_fields: tuple[str, ...] = ()  # names never scrubbed (exact, normalized)
    ip_mode: IpMode = IpMode.STORE
    drop_user_ip: bool = False  # never store user.ip_address, even one the SDK sent


DEFAULT_SETTINGS = PrivacySettings()


def field_names(values: Iterable[str], setting: str) -> tuple[str, ...]:
    """The names of ``values`` stripped, blank ones skipped, duplicates (once normalized)
    removed, order kept. ``InvalidSetting`` past the bounds or for a name that has
    nothing left once separators are removed."""
    names: list[str] = []
    seen: set[str] = set()
    for raw in values:
        name = raw.strip()
        if not name:
            continue
        key = normalize_key(name)
        if len(name) > MAX_FIELD_NAME_CHARS:
            raise InvalidSetting(f"{setting}: a name is longer than {MAX_FIELD_NAME_CHARS}")
        if len(key) < MIN_FIELD_NAME_CHARS or "\x00" in name:
            raise InvalidSetting(f"{setting}: {name!r} is not a field name")
        if key not in seen:
            seen.add(key)
            names.append(name)
    if len(names) > MAX_FIELD_NAMES:
        raise InvalidSetting(f"{setting}: at most {MAX_FIELD_NAMES} names")
    return tuple(names)


def names_from_text(text: str, setting: str) -> tuple[str, ...]:
    """Names from a form's text area: one per line, or separated by commas."""
    return field_names(text.replace(",", "\n").splitlines(), setting)
