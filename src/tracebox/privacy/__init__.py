"""Privacy: scrub secrets and personal data out of an event before it is stored (issue 11).

Pure: rules in, scrubbed event out, no I/O. ``scrub(event, settings)`` takes a normalized
event (docs/design.md) and returns a scrubbed copy in which every value a rule matched is
``[Filtered]`` (or, for IP addresses, anonymised or removed), plus the remarks that say
by which rule, in ``event["_scrubbed"]`` (``read_remarks`` reads them back for display).
``scrub_sent(payload, settings)`` does the same to the payload as the SDK sent it, before
it is parsed and normalized (what the digest does when it can: cheaper).
The rules and settings are described in docs/privacy.md.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from tracebox.privacy import scan
from tracebox.privacy.remarks import ScrubRecord, read_remarks
from tracebox.privacy.rules import FILTERED, RULES, Rule
from tracebox.privacy.scrubber import REMARKS_KEY, Scrubber, Sent
from tracebox.privacy.settings import (
    DEFAULT_SETTINGS,
    InvalidSetting,
    IpMode,
    PrivacySettings,
)

__all__ = [
    "DEFAULT_SETTINGS",
    "FILTERED",
    "REMARKS_KEY",
    "RULES",
    "InvalidSetting",
    "IpMode",
    "PrivacySettings",
    "Rule",
    "ScrubRecord",
    "Sent",
    "read_remarks",
    "scrub",
    "scrub_sent",
    "scrubber_for",
    "use_hyperscan",
]

MAX_COMPILED_SETTINGS = 256  # projects whose compiled rules are kept per process


@lru_cache(maxsize=MAX_COMPILED_SETTINGS)
def scrubber_for(settings: PrivacySettings) -> Scrubber:
    """The compiled rules of ``settings`` (compiled once, reused for every event)."""
    return Scrubber(settings)


def scrub(event: dict[str, Any], settings: PrivacySettings = DEFAULT_SETTINGS) -> dict[str, Any]:
    """``event`` scrubbed by ``settings``; the input is not changed."""
    return _scrubber(settings).scrub(event)


def scrub_sent(payload: bytes, settings: PrivacySettings = DEFAULT_SETTINGS) -> Sent | None:
    """An event's JSON payload, as the SDK sent it, scrubbed by ``settings`` before it is
    parsed (``Scrubber.scrub_sent``); None: parse and normalize it, then ``scrub`` it."""
    return _scrubber(settings).scrub_sent(payload)


def use_hyperscan() -> None:
    """Scrub payloads as sent with Hyperscan in this process (``scan.py``: the digest's
    prepare process), and compile the default rules' patterns now (~65 ms), before the
    first batch, whose timing the digest reads to share its batches out."""
    if scan.use_hyperscan():
        scrubber_for(DEFAULT_SETTINGS).blob.text.sent_matches(b"{}")


def _scrubber(settings: PrivacySettings) -> Scrubber:
    global _last
    last = _last  # one read: the pair stays consistent if another thread replaces it
    if last is not None and last[0] is settings:  # a batch mostly has one project's rules
        return last[1]
    scrubber = scrubber_for(settings)
    _last = (settings, scrubber)
    return scrubber


# The last settings and their scrubber: skips hashing the settings for every event.
_last: tuple[PrivacySettings, Scrubber] | None = None
