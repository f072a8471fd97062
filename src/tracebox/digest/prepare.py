"""Turn spool records into rows for the store (pure: no I/O, but for symbolication).

Ingest spools each item as the SDK sent it; this is where it is parsed, once. Per event,
in this order (docs/design.md "Digest pipeline")::

    normalize -> scrub -> symbolicate -> in-app rules -> group -> summarize -> encode

where the scrubbing is done, when it can be, on the payload before it is parsed
(``privacy.scrub_sent``; the same result, for less CPU), then finished after normalizing.
The payloads of ``SCAN_GROUP`` records are scanned one after another, before the rest of
their preparing: the scanner's tables stay in the CPU's caches.

``normalize`` is ``protocol.event.normalize_event``; ``stages`` run next, in the order
given: privacy scrubbing first, then symbolication, each a pure function of the event
and its project's configuration (``digest.config``, read once per batch by the caller);
then ``grouping.calculate``, ``protocol.event.summarize``, ``protocol.tags.event_tags``
and ``store.payloads``. Symbolication needs the event's project and reads source map
artifacts: it is the injected ``Symbolicator``, run after the stages (its artifact
lookups are memoized per batch, its parsed maps cached).

A record that cannot be used (not JSON, not an object, an invalid session, a kind this
version does not know) is set aside: counted per project and reason in ``dropped``,
never raised, so it cannot block the spool.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from itertools import islice
from typing import TYPE_CHECKING, Any, Final, Literal

import orjson

from tracebox import grouping, privacy
from tracebox.digest import sdkdata
from tracebox.grouping.inapp import mark_sdk_frames
from tracebox.privacy import DEFAULT_SETTINGS, PrivacySettings
from tracebox.protocol.client import sdk_from_client
from tracebox.protocol.event import normalize_event, summarize
from tracebox.protocol.session import (
    SessionAggregate,
    SessionUpdate,
    normalize_session,
    normalize_session_aggregates,
)
from tracebox.protocol.tags import event_tags
from tracebox.spool.record import RecordError, RecordKind, SpoolRecord
from tracebox.store.payloads import Dictionary, PayloadEncoder
from tracebox.store.rows import PreparedEvent

if TYPE_CHECKING:  # the digest's symbolicator reads the database, the prepare process's none
    from tracebox.symbolication import Symbolicator

log = logging.getLogger("tracebox.digest")


@dataclass(frozen=True)
class ProjectConfig:
    project_id: int
    version: int  # projects.config_version this was loaded at
    dictionary: Dictionary | None = None  # the project's zstd dictionary (store.payloads)
    privacy: PrivacySettings = DEFAULT_SETTINGS  # what is scrubbed (issue 11)


Event = dict[str, Any]
# A step between normalization and grouping (scrubbing, symbolication): event in, event out.
Stage = Callable[[Event, ProjectConfig], Event]


class InvalidRecord(Exception):
    """A record whose payload cannot be stored; ``reason`` names why (``invalid_json``...)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class PreparedBatch:
    events: list[PreparedEvent] = field(default_factory=list)
    sessions: dict[int, list[SessionUpdate]] = field(default_factory=lambda: defaultdict(list))
    aggregates: dict[int, list[SessionAggregate]] = field(default_factory=lambda: defaultdict(list))
    # Items accepted but not stored, per (project, item type or "<kind>_<reason>").
    dropped: dict[tuple[int, str], int] = field(default_factory=lambda: defaultdict(int))
    # Records set aside by reason (the dropped ones above, and those with no project).
    invalid: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    sdk: sdkdata.SdkBatch = field(default_factory=sdkdata.SdkBatch)  # attachments, logs...

    def extend(self, other: PreparedBatch) -> None:
        """Append the rows of ``other``, prepared from the records after this batch's."""
        self.events += other.events
        for project_id, updates in other.sessions.items():
            self.sessions.setdefault(project_id, []).extend(updates)
        for project_id, aggregates in other.aggregates.items():
            self.aggregates.setdefault(project_id, []).extend(aggregates)
        for key, n in other.dropped.items():
            self.dropped[key] = self.dropped.get(key, 0) + n
        for reason, n in other.invalid.items():
            self.invalid[reason] = self.invalid.get(reason, 0) + n
        self.sdk.attachments += other.sdk.attachments
        self.sdk.feedback += other.sdk.feedback
        self.sdk.discarded.update(other.sdk.discarded)
        self.sdk.logs += other.sdk.logs


# Events scanned for scrubbing one after another, before the rest of their preparing:
# the scanner's tables stay in the CPU's caches (-22 us per event of ~375 with groups of
# 32, no more with 64: docs/performance.md), for a group's records decoded at once
# (~25 KB each with the scrubbed payload).
SCAN_GROUP = 32


class _Scan(Enum):
    NOT_DONE = "not scanned"  # not an event, no project, or the scan failed


# What ``_scanned`` gives: the payload scrubbed as sent, None (scrub it once normalized),
# or ``_NOT_SCANNED`` (scrub it as it is prepared).
Scanned = privacy.Sent | None | Literal[_Scan.NOT_DONE]
_NOT_SCANNED: Final = _Scan.NOT_DONE


class Preparer:
    """Not thread-safe (one compressor); one per digest worker."""

    def __init__(
        self,
        stages: Sequence[Stage] = (),
        symbolicator: Symbolicator | None = None,
        scan_group: int = SCAN_GROUP,
    ) -> None:
        self._payloads = PayloadEncoder()
        self._stages = tuple(stages)
        self._symbolicator = symbolicator
        self._sdk = sdkdata.SdkPreparer()
        self._scan_group = scan_group

    def prepare(
        self,
        records: Iterable[SpoolRecord | RecordError],
        configs: Mapping[int, ProjectConfig],
    ) -> PreparedBatch:
        """Rows for ``records`` (as ``read_records`` or ``decoded`` gives them); ``configs``
        holds the configuration of every project that still exists. Records are taken
        ``scan_group`` at a time: their events scanned for scrubbing, then prepared."""
        batch = PreparedBatch()
        if self._symbolicator is not None:
            self._symbolicator.begin_batch()
        for group in _groups(records, self._scan_group):
            scanned = [_scanned(record, configs) for record in group]
            for record, sent in zip(group, scanned, strict=True):
                self._prepare_record(batch, record, configs, sent)
        return batch

    def _prepare_record(
        self,
        batch: PreparedBatch,
        record: SpoolRecord | RecordError,
        configs: Mapping[int, ProjectConfig],
        sent: Scanned,
    ) -> None:
        if isinstance(record, RecordError):
            _set_aside(batch, record.project_id, "record", "unreadable")
            log.error("spool record set aside: %s", record)
            return
        config = configs.get(record.project_id)
        if config is None:
            batch.invalid["project_deleted"] += 1  # no project left to count it against
            return
        try:
            self._add(batch, record, config, sent)
        except InvalidRecord as e:
            _set_aside(batch, record.project_id, record.kind, e.reason)
        except Exception:
            # A bug must not stall the spool: this record is set aside, the rest go on.
            log.exception("spool record (%s) set aside: processing failed", record.kind)
            _set_aside(batch, record.project_id, record.kind, "failed")

    def _add(
        self,
        batch: PreparedBatch,
        record: SpoolRecord,
        config: ProjectConfig,
        sent: Scanned,
    ) -> None:
        """``sent``: the event's payload scrubbed ahead (``_scanned``), or ``_NOT_SCANNED``."""
        kind, project_id = record.kind, record.project_id
        if kind is RecordKind.EVENT:
            event = self._normalized(record, config, sent)
            batch.events.append(self.prepare_event(project_id, event, config.dictionary))
        elif kind is RecordKind.SESSION:
            batch.sessions[project_id].append(_session(record))
        elif kind is RecordKind.SESSIONS:
            batch.aggregates[project_id].extend(_aggregates(record))
        elif kind is RecordKind.DROPPED:
            for item_type, n in _dropped_counts(record).items():
                batch.dropped[(project_id, item_type)] += n
        elif kind in sdkdata.SDK_KINDS:
            self._add_sdk_data(batch, record, config)

    def _add_sdk_data(
        self, batch: PreparedBatch, record: SpoolRecord, config: ProjectConfig
    ) -> None:
        """Attachments, feedback, client reports, logs (``digest.sdkdata``); the error
        events of error-level log records are digested as events."""
        try:
            raw_events = self._sdk.add(batch.sdk, record, lambda e: self._scrubbed(e, config))
        except sdkdata.Unusable as e:
            raise InvalidRecord(e.reason) from None
        for raw in raw_events:
            event = normalize_event(raw, received_at=record.received, client_ip=None)
            batch.events.append(
                self.prepare_event(
                    record.project_id, self._staged(event, record.project_id, config)
                )
            )

    def _normalized(self, record: SpoolRecord, config: ProjectConfig, sent: Scanned) -> Event:
        """normalize -> scrub -> symbolicate; the scrubbing is done on the payload as sent,
        before it is parsed, when it can be (``privacy.scrub_sent``: no serialization of
        the event for the scan, no parse of the edited fields again)."""
        if sent is _NOT_SCANNED:
            sent = _scrub_sent(record, config)
        scrubbed = None if sent is None else _parsed_object(sent.payload)
        if sent is not None and scrubbed is not None and sent.fits(scrubbed):
            event = self._normalize(scrubbed, record)
            return self._staged(event, record.project_id, config, sent)
        raw = _parse_object(record.payload)  # raises InvalidRecord: not JSON, not an object
        if sent is not None and scrubbed is None:  # a bug: said, and nothing lost
            log.error("scrubbing an event as sent broke its JSON: scrubbed once normalized")
        event = raw if record.normalized else self._normalize(raw, record)
        return self._staged(event, record.project_id, config)

    def _normalize(self, raw: Event, record: SpoolRecord) -> Event:
        event = normalize_event(
            raw,
            received_at=record.received,
            client_ip=record.client_ip,
            event_id=record.event_id,
        )
        _name_the_client(event, record)
        return event

    def _staged(
        self, event: Event, project_id: int, config: ProjectConfig, sent: privacy.Sent | None = None
    ) -> Event:
        """scrub -> symbolicate, for a normalized event (``sent``: already scrubbed as sent,
        to be finished)."""
        event = self._scrubbed(event, config, sent)
        if self._symbolicator is not None:  # after scrubbing, before grouping
            self._symbolicator.symbolicate(project_id, event)
        return event

    def _scrubbed(
        self, event: Event, config: ProjectConfig, sent: privacy.Sent | None = None
    ) -> Event:
        # Before anything is derived from the event: grouping, summary, payload (issue 11).
        event = privacy.scrub(event, config.privacy) if sent is None else sent.finish(event)
        for stage in self._stages:
            event = stage(event, config)
        return event

    def prepare_event(
        self, project_id: int, event: Event, dictionary: Dictionary | None = None
    ) -> PreparedEvent:
        """in-app rules -> group -> summarize -> encode (with the project's zstd dictionary,
        if it has one), for a normalized (scrubbed, symbolicated) event; SDK frames are
        marked not in-app first (``grouping.inapp``)."""
        mark_sdk_frames(event)
        group = grouping.calculate(event)
        summary = summarize(event)
        return PreparedEvent(
            project_id=project_id,
            event_id=event["event_id"],
            grouping_hash=group.hash,
            fallback_hashes=group.fallback_hashes,
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
            tags=tuple(event_tags(event)),
            payload=self._payloads.encode(event, dictionary),
        )


def _groups(
    records: Iterable[SpoolRecord | RecordError], n: int
) -> Iterator[list[SpoolRecord | RecordError]]:
    """``records`` ``n`` at a time (``itertools.batched``, new in Python 3.12)."""
    it = iter(records)
    while group := list(islice(it, n)):
        yield group


def _scanned(record: SpoolRecord | RecordError, configs: Mapping[int, ProjectConfig]) -> Scanned:
    """An event's payload scrubbed as sent (``_scrub_sent``), ahead of its preparing;
    ``_NOT_SCANNED`` for any other record, and when the scan fails: the failure is then
    met again in the record's own preparing, which sets that record alone aside."""
    if isinstance(record, RecordError) or record.kind is not RecordKind.EVENT:
        return _NOT_SCANNED
    config = configs.get(record.project_id)
    if config is None:
        return _NOT_SCANNED
    try:
        return _scrub_sent(record, config)
    except Exception:
        return _NOT_SCANNED


def _scrub_sent(record: SpoolRecord, config: ProjectConfig) -> privacy.Sent | None:
    return None if record.normalized else privacy.scrub_sent(record.payload, config.privacy)


def _name_the_client(event: Event, record: SpoolRecord) -> None:
    """An event without ``sdk`` (old raven clients) names the client that sent it."""
    client = record.headers.get("client")
    if "sdk" not in event and isinstance(client, str):
        sdk = sdk_from_client(client)
        if sdk is not None:
            event["sdk"] = sdk


def read_records(raw: Iterable[bytes | memoryview]) -> list[SpoolRecord | RecordError]:
    """Each spool record decoded, or the error saying why it cannot be."""
    return list(decoded(raw))


def decoded(raw: Iterable[bytes | memoryview]) -> Iterator[SpoolRecord | RecordError]:
    """``read_records``, one record at a time: each is decoded (its payload inflated)
    only when it is wanted, and can be dropped before the next one is."""
    for data in raw:
        try:
            yield SpoolRecord.decode(data)
        except RecordError as e:
            yield e


def prepare_in_parts(
    preparer: Preparer,
    raw: Sequence[bytes | memoryview],
    configs: Callable[[Sequence[bytes | memoryview]], Mapping[int, ProjectConfig]],
    part: int | None,
) -> PreparedBatch:
    """``raw`` prepared ``part`` records at a time (None: all at once), each decoded only
    as it is prepared (``decoded``): a decoded record is its payload inflated, 12.6 KB
    for a 3.4 KB gzip body in the benchmark's corpus, and a part's ~160 held together
    raised each process's peak by ~2 MB. ``configs`` gives the configuration of the
    projects of each part's records (read from their headers)."""
    step = part or len(raw) or 1
    batch = PreparedBatch()
    for start in range(0, len(raw), step):
        records = raw[start : start + step]
        batch.extend(preparer.prepare(decoded(records), configs(records)))
    return batch


def project_ids(raw: Iterable[bytes | memoryview]) -> set[int]:
    """The projects of encoded records, read from their headers."""
    return {p for p in map(SpoolRecord.project_of, raw) if p is not None}


def _set_aside(batch: PreparedBatch, project_id: int | None, kind: str, reason: str) -> None:
    batch.invalid[f"{kind}_{reason}"] += 1
    if project_id is not None:
        batch.dropped[(project_id, f"{kind}_{reason}")] += 1


def _parse(payload: bytes) -> Any:
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError:
        raise InvalidRecord("invalid_json") from None


def _parsed_object(payload: bytes) -> Event | None:
    """The JSON object in ``payload``, or None."""
    try:
        return _parse_object(payload)
    except InvalidRecord:
        return None


def _parse_object(payload: bytes) -> Event:
    value = _parse(payload)
    if not isinstance(value, dict):
        raise InvalidRecord("not_an_object")
    return value


def _session(record: SpoolRecord) -> SessionUpdate:
    # Sessions are dropped silently when invalid, as Relay does (counted, never an error).
    raw = _parse(record.payload)
    if record.normalized:
        update: SessionUpdate = raw
        return update
    normalized = normalize_session(raw, received_at=record.received)
    if normalized is None:
        raise InvalidRecord("invalid")
    return normalized


def _aggregates(record: SpoolRecord) -> list[SessionAggregate]:
    raw = _parse(record.payload)
    if record.normalized:
        aggregates: list[SessionAggregate] = raw
        return aggregates
    normalized = normalize_session_aggregates(raw, received_at=record.received)
    if not normalized:
        raise InvalidRecord("invalid")
    return normalized


def _dropped_counts(record: SpoolRecord) -> dict[str, int]:
    counts = _parse_object(record.payload)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in counts.values()):
        raise InvalidRecord("invalid")
    return counts
