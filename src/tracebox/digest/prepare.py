"""Turn decoded spool records into rows for the store (pure: no I/O)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from tracebox import grouping, privacy
from tracebox.protocol.event import summarize
from tracebox.store.digest import PreparedEvent
from tracebox.store.payloads import PayloadEncoder


@dataclass
class PreparedBatch:
    events: list[PreparedEvent] = field(default_factory=list)
    sessions: dict[int, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    aggregates: dict[int, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    dropped: dict[tuple[int, str], int] = field(default_factory=lambda: defaultdict(int))
    invalid: int = 0


# The privacy settings of the projects of a batch, read once per batch by the worker.
PrivacyLoader = Callable[[set[int]], Mapping[int, privacy.PrivacySettings]]


class Preparer:
    def __init__(self, privacy_settings: PrivacyLoader | None = None) -> None:
        self._payloads = PayloadEncoder()
        self._privacy_settings = privacy_settings
        self._privacy: Mapping[int, privacy.PrivacySettings] = {}

    def prepare(self, records: list[bytes]) -> PreparedBatch:
        batch = PreparedBatch()
        decoded = []
        for raw in records:
            try:
                decoded.append(orjson.loads(raw))
            except orjson.JSONDecodeError:
                batch.invalid += 1
        if self._privacy_settings is not None:
            projects = {r.get("project_id") for r in decoded if isinstance(r, dict)}
            self._privacy = self._privacy_settings({p for p in projects if type(p) is int})
        for record in decoded:
            try:
                self._add(batch, record)
            except (AttributeError, KeyError, TypeError, ValueError):
                # A record is validated before it is spooled; this only guards against a
                # bug so one bad record cannot block the spool forever.
                batch.invalid += 1
        return batch

    @staticmethod
    def project_of(raw: bytes) -> int | None:
        """The project a spool record belongs to, if it can be read."""
        try:
            return int(orjson.loads(raw)["project_id"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return None

    def _add(self, batch: PreparedBatch, record: dict[str, Any]) -> None:
        kind, project_id, payload = record["kind"], int(record["project_id"]), record["payload"]
        if kind == "event":
            batch.events.append(self.prepare_event(project_id, payload))
        elif kind == "session":
            batch.sessions[project_id].append(payload)
        elif kind == "sessions":
            batch.aggregates[project_id].extend(payload)
        elif kind == "dropped":
            for item_type, n in payload.items():
                batch.dropped[(project_id, item_type)] += int(n)
        else:
            raise ValueError(f"unknown spool record kind {kind!r}")

    def prepare_event(self, project_id: int, event: dict[str, Any]) -> PreparedEvent:
        # Scrubbed before anything is derived from it: grouping, summary, payload.
        event = privacy.scrub(event, self._privacy.get(project_id, privacy.DEFAULT_SETTINGS))
        group = grouping.calculate(event)
        summary = summarize(event)
        return PreparedEvent(
            project_id=project_id,
            event_id=event["event_id"],
            grouping_hash=group.hash,
            grouping_version=group.version,
            fingerprint=orjson.dumps(group.components).decode(),
            title=summary.title,
            type=summary.type or "",
            value=summary.value or "",
            culprit=summary.culprit or "",
            platform=summary.platform,
            level=summary.level,
            timestamp=float(event["timestamp"]),
            received=float(event.get("received") or event["timestamp"]),
            environment=summary.environment,
            release=summary.release,
            user_key=summary.user_key,
            payload=self._payloads.encode(event),
        )
