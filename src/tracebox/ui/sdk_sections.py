"""The parts of an error's details page that come from what SDKs send besides the event
(issue 12): the event's attachments, the logs of its trace, the error's user feedback.
Only a project's own store holds them (a linked Sentry keeps its own)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tracebox.store import Database
from tracebox.store import attachments as attachment_store
from tracebox.store import feedback as feedback_store
from tracebox.store import logs as log_store
from tracebox.store.attachments import Attachment
from tracebox.store.feedback import FeedbackRow
from tracebox.store.logs import LogRow
from tracebox.tracking.models import Event

MAX_TRACE_LOGS = 100  # logs of the event's trace shown on its page
MAX_FEEDBACK = 20  # newest user reports shown on the error's page


@dataclass(frozen=True)
class EventExtras:
    attachments: list[Attachment] = field(default_factory=list)
    logs: list[LogRow] = field(default_factory=list)
    feedback: list[FeedbackRow] = field(default_factory=list)
    feedback_count: int = 0
    # What the project's attachments hold (files, bytes as received) and its bound
    # (TRACEBOX_ATTACHMENTS_MAX_PROJECT_BYTES): shown with the event's attachments.
    stored_attachments: tuple[int, int] = (0, 0)
    max_attachment_bytes: int = 0


def load(
    db: Database, project_id: int, error_id: int, event: Event | None, *, max_project_bytes: int
) -> EventExtras:
    with db.read() as conn:
        count = feedback_store.count_for_error(conn, project_id, error_id)
        reports = (
            feedback_store.for_error(conn, project_id, error_id, MAX_FEEDBACK) if count else []
        )
        if event is None:
            return EventExtras(feedback=reports, feedback_count=count)
        files = attachment_store.for_event(conn, project_id, event.event_id)
        stored = attachment_store.usage(conn, project_id) if files else (0, 0)
        trace = event.trace_id
        logs = log_store.for_trace(conn, project_id, trace, MAX_TRACE_LOGS) if trace else []
    return EventExtras(
        attachments=files,
        logs=logs,
        feedback=reports,
        feedback_count=count,
        stored_attachments=stored,
        max_attachment_bytes=max_project_bytes,
    )
