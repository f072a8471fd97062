"""When a resolved error regresses and an ignored one comes back: Sentry's rules (pure).

Resolved (``GroupResolution.has_resolution`` in Sentry):
- *now*: any event that happened after the resolution reopens it;
- *in release X*: an event of X or of a newer release reopens it; older releases are
  expected to still fail;
- *in the next release* (after R, the latest release then): only a release newer than R
  reopens it.
An event without a release never reopens a release-based resolution (it cannot be
placed), nor does an event that happened before the error was resolved.

Releases are ordered as Sentry does: by semantic version when both versions are semver
of the same package (``web@1.4.2``), else by when each release was first seen.

Ignored (``GroupSnooze``): until a moment, until N more events, or until N more users;
whichever condition is set and passes first brings the error back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SEMVER = re.compile(
    r"^(?:(?P<package>[^@]+)@)?v?(?P<major>\d+)(?:\.(?P<minor>\d+))?(?:\.(?P<patch>\d+))?"
    r"(?:\.(?P<revision>\d+))?(?:-(?P<pre>[0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$"
)

NOW, IN_RELEASE, IN_NEXT_RELEASE = "now", "in_release", "in_next_release"


@dataclass(frozen=True)
class Semver:
    package: str
    numbers: tuple[int, int, int, int]
    pre: tuple[tuple[int, int | str], ...]  # () for a release: sorts after any pre-release


def semver(version: str) -> Semver | None:
    found = SEMVER.match(version)
    if found is None:
        return None
    numbers = tuple(int(found.group(k) or 0) for k in ("major", "minor", "patch", "revision"))
    pre = found.group("pre")
    parts = tuple((0, int(p)) if p.isdigit() else (1, p) for p in pre.split(".")) if pre else ()
    return Semver(found.group("package") or "", numbers, parts)  # type: ignore[arg-type]


def _semver_key(
    v: Semver,
) -> tuple[tuple[int, int, int, int], int, tuple[tuple[int, int | str], ...]]:
    return (v.numbers, 0 if v.pre else 1, v.pre)


def newer_or_same(a: str, b: str, first_seen: dict[str, float]) -> bool:
    """Whether release ``a`` is ``b`` or comes after it. ``first_seen`` gives when each
    release was first reported (a release never seen counts as the newest)."""
    if a == b:
        return True
    sa, sb = semver(a), semver(b)
    if sa is not None and sb is not None and sa.package == sb.package:
        return _semver_key(sa) >= _semver_key(sb)
    return first_seen.get(a, float("inf")) >= first_seen.get(b, float("inf"))


@dataclass(frozen=True)
class Resolved:
    resolution: str  # now | in_release | in_next_release
    release: str | None
    resolved_at: float


def regresses(
    state: Resolved, *, release: str | None, timestamp: float, first_seen: dict[str, float]
) -> bool:
    """Whether an event (its release and time) reopens an error resolved as ``state``."""
    if timestamp <= state.resolved_at:
        return False  # it happened before the error was resolved
    if state.resolution == NOW:
        return True
    if release is None:
        return False
    if state.release is None:  # resolved "in the next release" before any release existed
        return True
    if state.resolution == IN_RELEASE:
        return newer_or_same(release, state.release, first_seen)
    return release != state.release and newer_or_same(release, state.release, first_seen)


@dataclass(frozen=True)
class Ignored:
    until: float | None
    count: int | None
    events_base: int
    user_count: int | None
    users_base: int


def ignore_passed(state: Ignored, *, now: float, events: int, users: int) -> str | None:
    """Which condition of an ignored error has passed (``until``, ``count``,
    ``user_count``), or None while it stays ignored."""
    if state.until is not None and now >= state.until:
        return "until"
    if state.count is not None and events - state.events_base >= state.count:
        return "count"
    if state.user_count is not None and users - state.users_base >= state.user_count:
        return "user_count"
    return None
