"""The usage view's figures, per project and for the instance: what is stored (items and
bytes per kind), what happened to items over the last 30 days (received, accepted,
refused by reason, expired, deleted, discarded by SDKs), what was accepted but not kept,
and the retention in force. One builder for the UI, the API and ``tracebox stats``."""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import Connection

from tracebox.config import Settings
from tracebox.lifecycle.kinds import PRUNABLE_KINDS
from tracebox.lifecycle.retention import Policy
from tracebox.store import (
    Database,
    client_reports,
    dictionaries,
    projects,
    retention,
    sqlite_space,
    usage,
)
from tracebox.store.dictionaries import DictionaryInfo
from tracebox.store.retention import RetentionSettings
from tracebox.store.usage import Outcome, ProjectUsage, Stored

DAYS = 30
KINDS = ("events", "attachments", "logs", "artifacts")  # shown even when none is stored
LARGEST_PROJECTS = 10


@dataclass(frozen=True)
class Day:
    day: float  # unix seconds at 00:00 UTC
    accepted: int
    refused: int
    expired: int


@dataclass
class Outcomes:
    """Item counts over the last ``DAYS`` days, by outcome and reason (category: error)."""

    accepted: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    expired: dict[str, int] = field(default_factory=dict)
    deleted: dict[str, int] = field(default_factory=dict)
    client_discarded: dict[str, int] = field(default_factory=dict)  # SDK client reports
    other_categories: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def received(self) -> int:
        return self.accepted + sum(self.refused.values())


@dataclass(frozen=True)
class ProjectReport:
    project_id: int
    stored: list[Stored]
    outcomes: Outcomes
    daily: list[Day]
    not_kept: dict[str, int]  # item types accepted but not stored, since the project began
    retention: Policy  # in force
    own_retention: RetentionSettings  # the project's own values (None: instance default)
    dictionary: DictionaryInfo | None  # the newest zstd dictionary


@dataclass(frozen=True)
class InstanceReport:
    space: sqlite_space.Space
    budget_bytes: int
    stored: list[Stored]
    largest: list[ProjectUsage]
    outcomes: Outcomes
    defaults: Policy
    incremental_vacuum: bool | None  # SQLite only


def project(
    db: Database, settings: Settings, project_id: int, now: float | None = None
) -> ProjectReport:
    now = now or time.time()
    since = _first_hour(now)
    with db.read() as conn:
        stored = usage.stored(conn, project_id) | _uncounted(conn, project_id)
        outcomes = _outcomes(usage.outcomes(conn, project_id, since_hour=since))
        for d in client_reports.totals(conn, project_id, since_hour=since):
            # What the SDKs reported they discarded (client reports, issue 12), by reason;
            # other categories than errors name theirs.
            name = d.reason if d.category in ("error", "default") else f"{d.reason} ({d.category})"
            outcomes.client_discarded[name] = outcomes.client_discarded.get(name, 0) + d.count
        days = usage.daily_outcomes(conn, project_id, since_hour=since)
        not_kept = usage.not_kept(conn, project_id)
        own = retention.get(conn, project_id)
        latest = next(iter(dictionaries.list_for_project(conn, project_id)), None)
    return ProjectReport(
        project_id=project_id,
        stored=_kinds(stored),
        outcomes=outcomes,
        daily=_daily(days, now),
        not_kept=not_kept,
        retention=Policy.of(own, settings),
        own_retention=own,
        dictionary=latest,
    )


def instance(db: Database, settings: Settings, now: float | None = None) -> InstanceReport:
    now = now or time.time()
    with db.read() as conn:
        space = sqlite_space.space(conn)
        stored = usage.instance_stored(conn) | _uncounted_instance(conn)
        largest = usage.largest_projects(conn, LARGEST_PROJECTS)
        outcomes = _outcomes(usage.outcomes(conn, None, since_hour=_first_hour(now)))
        mode = sqlite_space.vacuum_mode(conn)
    return InstanceReport(
        space=space,
        budget_bytes=settings.max_data_bytes,
        stored=_kinds(stored),
        largest=largest,
        outcomes=outcomes,
        defaults=Policy(settings.retention_days, settings.retention_events_per_error),
        incremental_vacuum=None if mode is None else mode == sqlite_space.AUTO_VACUUM_INCREMENTAL,
    )


def _uncounted(conn: Connection, project_id: int) -> dict[str, Stored]:
    """What kinds that keep no usage counters store (their own query)."""
    found = {}
    for kind in PRUNABLE_KINDS:
        if kind.usage is not None:
            items, size = kind.usage(conn, project_id)
            found[kind.name] = Stored(kind.name, items, size)
    return found


def _uncounted_instance(conn: Connection) -> dict[str, Stored]:
    """The same, summed over every project."""
    found: dict[str, Stored] = {}
    for project in projects.list_all(conn):
        for name, s in _uncounted(conn, project.id).items():
            total = found.get(name, Stored(name, 0, 0))
            found[name] = Stored(name, total.items + s.items, total.bytes + s.bytes)
    return found


def _first_hour(now: float) -> int:
    return int(now // 86400 - DAYS + 1) * 24


def _kinds(stored: dict[str, Stored]) -> list[Stored]:
    names = [*KINDS, *sorted(set(stored) - set(KINDS))]
    return [stored.get(k, Stored(k, 0, 0)) for k in names]


def _outcomes(counts: list[usage.OutcomeCount]) -> Outcomes:
    found = Outcomes()
    other: dict[str, dict[str, int]] = defaultdict(dict)
    for c in counts:
        if c.category != "error":
            key = f"{c.outcome}:{c.reason}" if c.reason else c.outcome
            other[c.category][key] = other[c.category].get(key, 0) + c.count
        elif c.outcome == Outcome.ACCEPTED:
            found.accepted += c.count
        else:
            by_reason = getattr(found, c.outcome, None)
            if isinstance(by_reason, dict):
                by_reason[c.reason or "unknown"] = by_reason.get(c.reason, 0) + c.count
    found.other_categories = dict(other)
    return found


def _daily(days: dict[int, dict[str, int]], now: float) -> list[Day]:
    today = int(now // 86400)
    return [
        Day(
            float(d * 86400),
            days.get(d, {}).get(Outcome.ACCEPTED, 0),
            days.get(d, {}).get(Outcome.REFUSED, 0),
            days.get(d, {}).get(Outcome.EXPIRED, 0),
        )
        for d in range(today - DAYS + 1, today + 1)
    ]


def project_json(r: ProjectReport) -> dict[str, Any]:
    data = asdict(r)
    data["outcomes"]["received"] = r.outcomes.received
    data["retention"]["max_age_days_is_default"] = r.own_retention.max_age_days is None
    data["retention"]["max_events_per_error_is_default"] = (
        r.own_retention.max_events_per_error is None
    )
    data.pop("own_retention")
    if r.dictionary is not None:
        data["dictionary"]["used"] = r.dictionary.used
    return data


def instance_json(r: InstanceReport) -> dict[str, Any]:
    data = asdict(r)
    data["outcomes"]["received"] = r.outcomes.received
    return data
