"""Bulk data for the UI benchmark: N events in M errors, written straight through the
digest's batch write (``tracebox.store.digest.write_events``) with ``PreparedEvent``s.

Generation skips ingestion, the spool and grouping (which ``ingest_bench.py`` measures):
each error gets a fixed grouping hash, every event a realistic payload (a Python, Node or
Java stack trace with source context, breadcrumbs, tags, a request, contexts), encoded
once per template as the digest does (``store.payloads``) and shared by the events of an error.
"""

from __future__ import annotations

import hashlib
import random
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import update

from tracebox.protocol.tags import event_tags
from tracebox.store import Database
from tracebox.store import digest as store_digest
from tracebox.store.digest import PreparedEvent
from tracebox.store.payloads import PayloadEncoder
from tracebox.store.tables import errors

DAY = 86400
PLATFORMS = ("python", "node", "java")
LEVELS = ("error", "error", "error", "warning", "fatal")
BROWSERS = ("Firefox", "Chrome", "Safari", "Edge")  # tags vary per error: tag queries select
SYSTEMS = ("Linux", "Windows", "macOS")


@dataclass(frozen=True)
class ErrorTemplate:
    index: int
    grouping_hash: str
    title: str
    type: str
    value: str
    culprit: str
    platform: str
    level: str
    environment: str
    release: str
    tags: tuple[tuple[str, str], ...]  # what the digest counts in error_tags, but users
    payload: bytes  # zstd-compressed normalized event


def _frames(i: int, platform: str, depth: int) -> list[dict[str, Any]]:
    ext = {"python": "py", "node": "js", "java": "java"}[platform]
    frames = []
    for d in range(depth):
        in_app = d >= depth - 4
        module = f"app/module_{i % 97}/part_{d}" if in_app else f"vendor/lib_{d % 7}/core"
        frames.append(
            {
                "filename": f"{module}.{ext}",
                "abs_path": f"/srv/app/{module}.{ext}",
                "function": f"handler_{i}_{d}" if in_app else f"dispatch_{d}",
                "module": module.replace("/", "."),
                "lineno": 10 + d * 7,
                "in_app": in_app,
                "context_line": f"    result = step_{d}(payload, retries={d})",
                "pre_context": [
                    f"def handler_{i}_{d}(payload):",
                    "    # validate",
                    "    check(payload)",
                ],
                "post_context": ["    return result", "", ""],
                "vars": {"payload": f"<Payload id={i}>", "retries": d},
            }
        )
    return frames


def error_templates(count: int, *, seed: int) -> list[ErrorTemplate]:
    rng = random.Random(seed)
    encoder = PayloadEncoder()  # the digest's own payload format
    templates = []
    for i in range(count):
        platform = PLATFORMS[i % len(PLATFORMS)]
        type_ = f"{('Value', 'Type', 'Key', 'Runtime', 'Lookup')[i % 5]}Error{i}"
        value = f"operation {i} failed for record {rng.randrange(10**6)}"
        frames = _frames(i, platform, depth=12 + i % 12)
        culprit = f"{frames[-1]['module']} in {frames[-1]['function']}"
        event = {
            "event_id": uuid.UUID(int=rng.getrandbits(128)).hex,
            "platform": platform,
            "level": LEVELS[i % len(LEVELS)],
            "release": f"app@{1 + i % 3}.{i % 10}.0",
            "environment": "staging" if i % 10 == 9 else "production",
            "logger": "app",
            "exception": {
                "values": [{"type": type_, "value": value, "stacktrace": {"frames": frames}}]
            },
            "breadcrumbs": {
                "values": [
                    {
                        "timestamp": 1.7e9 + b,
                        "category": "http",
                        "level": "info",
                        "message": f"GET /api/items/{b}",
                    }
                    for b in range(15)
                ]
            },
            "tags": [
                ["browser", BROWSERS[i % len(BROWSERS)]],
                ["os", SYSTEMS[i % len(SYSTEMS)]],
                ["region", f"eu-{i % 3}"],
            ],
            "user": {"id": f"user-{i}", "email": f"user-{i}@example.com", "username": f"u{i}"},
            "request": {
                "method": "POST",
                "url": f"https://app.example.com/items/{i}",
                "headers": [["Accept", "application/json"], ["User-Agent", "Mozilla/5.0"]],
            },
            "contexts": {"runtime": {"name": platform, "version": "1.0"}, "os": {"name": "Linux"}},
            "sdk": {"name": f"sentry.{platform}", "version": "2.0.0"},
        }
        templates.append(
            ErrorTemplate(
                index=i,
                grouping_hash=hashlib.md5(f"bench-{seed}-{i}".encode()).hexdigest(),
                title=f"{type_}: {value}",
                type=type_,
                value=value,
                culprit=culprit,
                platform=platform,
                level=str(event["level"]),
                environment=str(event["environment"]),
                release=str(event["release"]),
                # the user.* tags are each event's own (``_prepared``): as many distinct
                # users per error as a real project has, so user queries meet that many rows
                tags=tuple(kv for kv in event_tags(event) if not kv[0].startswith("user.")),
                payload=encoder.encode(event),
            )
        )
    return templates


def events_per_error(errors_count: int, events_count: int) -> list[int]:
    """A Zipf-like spread (the busiest error holds about a tenth of all events), each
    error at least one event, summing to exactly ``events_count``."""
    weights = [1.0 / (i + 1) for i in range(errors_count)]
    total = sum(weights)
    spare = events_count - errors_count
    counts = [1 + int(spare * w / total) for w in weights]
    counts[0] += events_count - sum(counts)
    return counts


def generate(
    db: Database,
    project_id: int,
    *,
    errors_count: int,
    events_count: int,
    days: int = 30,
    batch: int = 20_000,
    seed: int = 1,
    now: float | None = None,
) -> Iterator[int]:
    """Write the events; yields the running total after each batch (one transaction)."""
    now = time.time() if now is None else now
    rng = random.Random(seed)
    templates = error_templates(errors_count, seed=seed)
    order = [
        t
        for t, n in zip(templates, events_per_error(errors_count, events_count), strict=True)
        for _ in range(n)
    ]
    rng.shuffle(order)
    start = now - days * DAY
    step = (now - start) / len(order)
    written = 0
    for first in range(0, len(order), batch):
        chunk = [
            _prepared(project_id, t, start + (first + k) * step, rng)
            for k, t in enumerate(order[first : first + batch])
        ]
        with db.write() as conn:
            store_digest.write_events(conn, chunk)
        written += len(chunk)
        yield written
    _set_statuses(db, project_id, rng)


USERS = 5000  # distinct users across the project


def _prepared(project_id: int, t: ErrorTemplate, ts: float, rng: random.Random) -> PreparedEvent:
    user = rng.randrange(USERS)
    users = (
        ("user.id", f"user-{user}"),
        ("user.email", f"user-{user}@example.com"),
        ("user.username", f"u{user}"),
    )
    return PreparedEvent(
        project_id=project_id,
        event_id=uuid.UUID(int=rng.getrandbits(128)).hex,
        grouping_hash=t.grouping_hash,
        grouping_version="bench",
        fingerprint="[]",
        title=t.title,
        type=t.type,
        value=t.value,
        culprit=t.culprit,
        platform=t.platform,
        level=t.level,
        timestamp=ts,
        received=ts,
        environment=t.environment,
        release=t.release,
        user_key=f"id:user-{user}",
        tags=t.tags + users,
        payload=t.payload,
    )


def _set_statuses(db: Database, project_id: int, rng: random.Random) -> None:
    """A tenth of the errors resolved, a twentieth ignored, as a real project has."""
    with db.write() as conn:
        for status, modulo, rest in (("resolved", 10, 3), ("ignored", 20, 7)):
            conn.execute(
                update(errors)
                .where(errors.c.project_id == project_id, errors.c.id % modulo == rest)
                .values(status=status)
            )
