"""The digest's side of what SDKs send besides events and sessions (issue 12;
docs/sdk-data.md): attachments, user feedback, client reports and logs. Records are
parsed here, once, into rows for their store modules, and written in the batch's
transaction (``write``).

Feedback and log records are run through the same scrubbing stages as events (as
``extra`` of an event-shaped object) before anything is kept. A log record at level
error with an error value also becomes an error event (``protocol.logs.error_event``),
returned to the preparer to be digested like any other event. What is prepared here is
plain data (``store.rows``): the prepare process builds it without the database layer;
``digest.sdkstore`` writes it.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
import zstandard

from tracebox.protocol import client_reports as client_report_protocol
from tracebox.protocol.feedback import Feedback, from_feedback_event, from_user_report
from tracebox.protocol.logs import LogRecord, error_event, normalize_logs
from tracebox.spool.record import RecordKind, SpoolRecord
from tracebox.store.payloads import compressed
from tracebox.store.rows import CHUNK_BYTES, NewAttachment, NewFeedback, NewLog

SDK_KINDS = frozenset(
    {
        RecordKind.ATTACHMENT,
        RecordKind.FEEDBACK,
        RecordKind.USER_REPORT,
        RecordKind.CLIENT_REPORT,
        RecordKind.LOG,
    }
)
ATTACHMENT_ZSTD_LEVEL = 3  # as event payloads: most of the ratio at little CPU
LOG_RECORD_OVERHEAD_BYTES = 64  # the columns besides body and attributes, roughly

Event = dict[str, Any]
Scrub = Callable[[Event], Event]  # the preparer's scrubbing stages, for one project


class Unusable(Exception):
    """A record that holds nothing to keep; ``reason`` names why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class SdkBatch:
    attachments: list[NewAttachment] = field(default_factory=list)
    feedback: list[NewFeedback] = field(default_factory=list)
    # (project, hour, category, reason) -> quantity the SDKs discarded
    discarded: Counter[tuple[int, int, str, str]] = field(default_factory=Counter)
    logs: list[NewLog] = field(default_factory=list)


class SdkPreparer:
    """Not thread-safe (one compressor); one per digest worker."""

    def __init__(self) -> None:
        self._compressor = zstandard.ZstdCompressor(level=ATTACHMENT_ZSTD_LEVEL)

    def add(self, batch: SdkBatch, record: SpoolRecord, scrub: Scrub) -> list[Event]:
        """Add ``record`` to ``batch``; return the error events it stands for (SDK
        payloads, to normalize). ``Unusable`` when it holds nothing to keep."""
        kind = record.kind
        if kind is RecordKind.ATTACHMENT:
            batch.attachments.append(self._attachment(record))
        elif kind is RecordKind.FEEDBACK or kind is RecordKind.USER_REPORT:
            batch.feedback.append(_feedback(record, scrub))
        elif kind is RecordKind.CLIENT_REPORT:
            _client_report(batch, record)
        elif kind is RecordKind.LOG:
            return _logs(batch, record, scrub)
        return []

    def _attachment(self, record: SpoolRecord) -> NewAttachment:
        data, headers = record.payload, record.headers
        if record.event_id is None:
            raise Unusable("no_event")
        chunks = tuple(
            compressed(self._compressor, data[i : i + CHUNK_BYTES])
            for i in range(0, len(data), CHUNK_BYTES)
        )
        return NewAttachment(
            project_id=record.project_id,
            event_id=record.event_id,
            name=str(headers.get("filename") or "attachment"),
            content_type=str(headers.get("content_type") or "application/octet-stream"),
            attachment_type=str(headers.get("attachment_type") or "event.attachment"),
            size=len(data),
            sha1=hashlib.sha1(data, usedforsecurity=False).hexdigest(),
            chunks=chunks,
            created_at=record.received,
        )


def _parse(payload: bytes) -> Any:
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError:
        raise Unusable("invalid_json") from None


def _feedback(record: SpoolRecord, scrub: Scrub) -> NewFeedback:
    raw = _parse(record.payload)
    read = from_user_report if record.kind is RecordKind.USER_REPORT else from_feedback_event
    found = read(raw, received_at=record.received)
    if found is None:
        raise Unusable("invalid")
    fields = {"name": found.name, "email": found.email, "comments": found.comments}
    if found.url:
        fields["url"] = found.url
    kept = _scrubbed(scrub, fields)
    return _new_feedback(record.project_id, found, kept)


def _new_feedback(project_id: int, found: Feedback, kept: dict[str, Any]) -> NewFeedback:
    def text(key: str, default: str) -> str:
        value = kept.get(key)
        return value if isinstance(value, str) else default

    return NewFeedback(
        project_id=project_id,
        feedback_id=found.feedback_id,
        event_id=found.event_id,
        name=text("name", ""),
        email=text("email", ""),
        comments=text("comments", found.comments),
        url=text("url", "") or None,
        source=found.source,
        release=found.release,
        environment=found.environment,
        created_at=found.timestamp,
    )


def _client_report(batch: SdkBatch, record: SpoolRecord) -> None:
    counts = client_report_protocol.discarded(_parse(record.payload))
    if not counts:
        raise Unusable("empty")
    hour = int(record.received // 3600)
    for (category, reason), quantity in counts.items():
        batch.discarded[(record.project_id, hour, category, reason)] += quantity


def _logs(batch: SdkBatch, record: SpoolRecord, scrub: Scrub) -> list[Event]:
    records = normalize_logs(_parse(record.payload), received_at=record.received)
    if not records:
        raise Unusable("empty")
    events: list[Event] = []
    for found in records:
        kept = _scrubbed(scrub, {"body": found.body, "attributes": found.attributes})
        body = kept.get("body") if isinstance(kept.get("body"), str) else found.body
        attributes = kept.get("attributes")
        clean = LogRecord(
            **{**found.__dict__, "body": body, "attributes": attributes}
        ) if isinstance(attributes, dict) else found  # fmt: skip
        batch.logs.append(_new_log(record.project_id, clean))
        event = error_event(clean)
        if event is not None:
            events.append(event)
    return events


def _new_log(project_id: int, r: LogRecord) -> NewLog:
    attributes = orjson.dumps(r.attributes).decode()
    return NewLog(
        project_id=project_id,
        timestamp=r.timestamp,
        level=r.level,
        severity_number=r.severity_number,
        body=r.body,
        trace_id=r.trace_id,
        span_id=r.span_id,
        release=r.release,
        environment=r.environment,
        logger=r.logger,
        attributes=attributes,
        size=len(r.body.encode()) + len(attributes) + LOG_RECORD_OVERHEAD_BYTES,
    )


def _scrubbed(scrub: Scrub, fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` after the scrubbing stages, which see them as an event's ``extra``."""
    event = scrub({"event_id": "0" * 32, "platform": "other", "extra": dict(fields)})
    extra = event.get("extra")
    return extra if isinstance(extra, dict) else {}
