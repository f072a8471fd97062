"""Envelope items besides events and sessions (issue 12): attachments, user feedback,
client reports and logs are spooled as received; every other type is counted as not
kept. Only cheap checks happen here (sizes, looks like a JSON object); the digest parses.

Attachments belong to the envelope's event: they wait for its id (the ``event_id``
header, else the event item's) and are bounded per item and per envelope, as Relay's
``max_attachment_size`` and ``max_attachments_size``. An attachment past a bound is
dropped alone, never its event.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from tracebox.config import Settings
from tracebox.protocol.envelope import Item
from tracebox.spool.record import RecordKind, SpoolRecord

if TYPE_CHECKING:
    from tracebox.ingest.process import Origin

# Item types Relay knows that Tracebox accepts and counts but does not keep; any other
# type is counted as "unknown", so a client cannot add a counter row per made-up type.
NOT_KEPT_TYPES = frozenset(
    {
        "transaction", "security", "form_data", "raw_security", "nel", "unreal_report",
        "statsd", "metric_buckets", "metric_meta", "profile", "profile_chunk",
        "profile_chunk_ui", "replay_event", "replay_recording", "replay_video", "check_in",
        "span", "otel_span", "otel_traces_data", "otel_log", "trace_metric",
    }
)  # fmt: skip
UNKNOWN_TYPE = "unknown"
_JSON_KINDS = {"feedback": RecordKind.FEEDBACK, "user_report": RecordKind.USER_REPORT}
MAX_FILENAME_CHARS = 255
MAX_CONTENT_TYPE_CHARS = 255
MAX_ATTACHMENT_TYPE_CHARS = 64
DEFAULT_ATTACHMENT_TYPE = "event.attachment"  # as the develop docs


def not_kept(item_type: str) -> str:
    """The counter name of an item that is accepted but not kept."""
    return item_type if item_type in NOT_KEPT_TYPES else UNKNOWN_TYPE


def record_count(item: Item) -> int:
    """Records an item holds: a log container says how many in ``item_count``."""
    count = item.headers.get("item_count")
    if isinstance(count, int) and not isinstance(count, bool) and count > 0:
        return count
    return 1


class SdkItems:
    """The items of one envelope that this module keeps, until the envelope's event id is
    known. Not thread-safe; one per request."""

    def __init__(self, settings: Settings, origin: Origin) -> None:
        self._settings = settings
        self._origin = origin
        self._attachments: list[Item] = []
        self._attachment_bytes = 0
        self.records: list[SpoolRecord] = []
        self.dropped: Counter[str] = Counter()

    def add(self, item: Item) -> bool:
        """Take ``item`` if its type is one of this module's; False otherwise."""
        kind = item.type
        if kind == "attachment":
            self._add_attachment(item)
        elif kind in _JSON_KINDS:
            self._add_json(item, _JSON_KINDS[kind], self._settings.max_event_bytes)
        elif kind == "client_report":
            self._add_json(item, RecordKind.CLIENT_REPORT, self._settings.max_client_report_bytes)
        elif kind == "log":
            self._add_json(item, RecordKind.LOG, self._settings.max_log_item_bytes)
        else:
            return False
        return True

    def finish(self, event_id: str | None) -> None:
        """Spool the attachments with the envelope's event id (dropped without one)."""
        for item in self._attachments:
            if event_id is None:
                self.dropped["attachment_no_event"] += 1
            else:
                self.records.append(self._record(RecordKind.ATTACHMENT, item, event_id))
        self._attachments.clear()

    def _add_attachment(self, item: Item) -> None:
        size = len(item.payload)
        if size > self._settings.attachment_max_bytes:
            self.dropped["attachment_too_large"] += 1
        elif self._attachment_bytes + size > self._settings.attachments_max_event_bytes:
            self.dropped["attachments_over_event_limit"] += 1
        else:
            self._attachment_bytes += size
            self._attachments.append(item)

    def _add_json(self, item: Item, kind: RecordKind, limit: int) -> None:
        if len(item.payload) > limit:
            self.dropped[f"{kind.value}_too_large"] += record_count(item)
        elif not looks_like_object(item.payload):
            self.dropped[f"{kind.value}_invalid"] += record_count(item)
        else:
            self.records.append(self._record(kind, item, None))

    def _record(self, kind: RecordKind, item: Item, event_id: str | None) -> SpoolRecord:
        return SpoolRecord(
            kind=kind,
            project_id=self._origin.project_id,
            key_id=self._origin.key_id,
            received=self._origin.received,
            payload=item.payload,
            event_id=event_id,
            headers=_kept_headers(kind, item.headers),
        )


def _kept_headers(kind: RecordKind, headers: dict[str, Any]) -> dict[str, Any]:
    """The item headers the digest needs, bounded."""
    if kind is RecordKind.ATTACHMENT:
        return {
            "filename": _text(headers.get("filename"), MAX_FILENAME_CHARS) or "attachment",
            "content_type": _text(headers.get("content_type"), MAX_CONTENT_TYPE_CHARS)
            or "application/octet-stream",
            "attachment_type": _text(headers.get("attachment_type"), MAX_ATTACHMENT_TYPE_CHARS)
            or DEFAULT_ATTACHMENT_TYPE,
        }
    return {}


def _text(value: Any, limit: int) -> str | None:
    return value[:limit] if isinstance(value, str) and value.strip() else None


def looks_like_object(payload: bytes) -> bool:
    """Starts with ``{`` and ends with ``}``, whitespace aside: the check an item gets
    before the 200 (the digest parses it)."""
    return payload.lstrip()[:1] == b"{" and payload.rstrip()[-1:] == b"}"
