"""One accepted item on its way from ingest to the digest: ``SpoolRecord``.

A record is encoded as a small header followed by the item's bytes exactly as the SDK
sent them (after decompression), so ingest never parses or re-serializes a payload and
the digest parses it once::

    version: uint8 | header length: uint32 little-endian | header: JSON object | payload

The header holds the other fields under short keys (``k`` kind, ``p`` project id, ``c``
client key id, ``r`` received, and when set ``ip``, ``id`` event id, ``h`` item headers).
A new item kind is a new ``RecordKind`` value; a new optional field is a new header key,
which older readers ignore.

A payload of ``COMPRESSED_BYTES`` is written zstd-compressed (level 1), with ``z`` set in
the header; ``decode`` gives it back as sent. A 12.6 KB event takes 3.6 KB of spool: the
spool was the disk's largest writer, and its fsyncs, which every acknowledgement waits
for, queued behind its own bytes and the database's (docs/performance.md, "The p99 was
the disk's"). A larger payload (an attachment) is spooled as it is: compressing it would
hold the web worker's event loop.

An event that came in a gzip request body holding little else (``SentGzip``) is written
as that body (3.4 KB for the same event), with ``g`` set to ``[offset, length]``: where
the item starts in the body's inflation, and its bytes. The web worker then compresses
nothing (zstd took 35 us of its ~180 per event), and the digest's decode of the record
costs ~9 us more (inflating, 26 us against 17: ``bench/prepare_stages.py``).

A Tracebox older than either reads such a payload as not JSON and sets it aside: drain
the spool before going back to one.

Records written by Tracebox before this format (one JSON object holding an already
normalized payload) are still read, so a spool left by an upgrade is not lost: they
decode with ``normalized`` set.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import orjson
import zstandard

from tracebox.errors import BadEncoding
from tracebox.protocol.decoding import gunzip_prefix

VERSION = 1
_PREFIX = struct.Struct("<BI")
_LEGACY_FIRST_BYTE = ord("{")
# Payloads compressed in the spool: from a small event up to the largest event (1 MiB).
COMPRESSED_BYTES = range(1024, (1 << 20) + 1)
_ZSTD_LEVEL = 1  # 34 us and 3.5x smaller for a 12.6 KB event; 15 us to decompress
_GZIP_MAGIC = b"\x1f\x8b"


class RecordKind(StrEnum):
    """What a record's payload is."""

    EVENT = "event"  # an error event's JSON, from the store endpoint or an envelope item
    SESSION = "session"  # a ``session`` item's JSON (one session update)
    SESSIONS = "sessions"  # a ``sessions`` item's JSON (pre-aggregated sessions)
    DROPPED = "dropped"  # JSON ``{item type: count}``: items accepted but not kept
    # Issue 12 (docs/sdk-data.md): each spooled as received.
    ATTACHMENT = "attachment"  # a file's bytes; headers: filename, content_type, attachment_type
    FEEDBACK = "feedback"  # a ``feedback`` item: an event of type feedback (current SDKs)
    USER_REPORT = "user_report"  # a ``user_report`` item: {event_id, name, email, comments}
    CLIENT_REPORT = "client_report"  # what the SDK discarded, by reason and category
    LOG = "log"  # a ``log`` item: {"items": [log records]}


class RecordError(ValueError):
    """Bytes that are not a spool record this version can read.

    ``project_id`` is set when the header could be read (say, a kind a newer version
    wrote), so the digest can count the record against its project.
    """

    def __init__(self, message: str, project_id: int | None = None) -> None:
        super().__init__(message)
        self.project_id = project_id


@dataclass(frozen=True, slots=True)
class SentGzip:
    """A gzip request body as the SDK sent it, and where a record's payload starts in its
    inflation: what ``encode`` writes instead of compressing the payload again. Ingest
    sets it only for an item that is nearly the whole body (``ingest.process``)."""

    body: bytes
    offset: int


@dataclass(frozen=True, slots=True)
class SpoolRecord:
    kind: RecordKind
    project_id: int
    key_id: int  # the client key that sent it
    received: float  # unix seconds when ingest accepted it
    payload: bytes  # the item as received (decompressed), never re-serialized
    client_ip: str | None = None  # the connection's address, for ``{{auto}}`` user IPs
    event_id: str | None = None  # for events: the id ingest answered with (32 hex)
    headers: Mapping[str, Any] = field(default_factory=dict)  # item headers a kind needs
    normalized: bool = False  # a record of the previous format: payload already normalized
    # Written in place of the payload when set; ``decode`` gives the payload back.
    sent: SentGzip | None = field(default=None, compare=False)

    def encode(self) -> bytes:
        header: dict[str, Any] = {
            "k": self.kind.value,
            "p": self.project_id,
            "c": self.key_id,
            "r": self.received,
        }
        if self.client_ip is not None:
            header["ip"] = self.client_ip
        if self.event_id is not None:
            header["id"] = self.event_id
        if self.headers:
            header["h"] = self.headers
        payload = self.payload
        if self.sent is not None:
            header["g"] = [self.sent.offset, len(payload)]
            payload = self.sent.body
        elif len(payload) in COMPRESSED_BYTES:
            header["z"] = 1
            payload = _ZSTD.compressor.compress(payload)
        encoded = orjson.dumps(header)
        return _PREFIX.pack(VERSION, len(encoded)) + encoded + payload

    @classmethod
    def decode(cls, data: bytes | memoryview) -> SpoolRecord:
        """The record ``encode`` wrote; ``RecordError`` for anything else. ``data`` may be
        a view (``digest.prepare_process`` reads a batch's records at once): the payload
        is copied out of it."""
        if data[:1] == bytes((_LEGACY_FIRST_BYTE,)):
            return _decode_legacy(data)
        if len(data) < _PREFIX.size:
            raise RecordError("spool record is shorter than its prefix")
        version, length = _PREFIX.unpack_from(data)
        if version != VERSION:
            raise RecordError(f"spool record version {version} is not {VERSION}")
        end = _PREFIX.size + length
        header = _header(data[_PREFIX.size : end])
        try:
            project_id = _integer(header["p"])
            kind = _kind(header["k"], project_id)
            return cls(
                kind=kind,
                project_id=project_id,
                key_id=_integer(header["c"]),
                received=float(header["r"]),
                payload=_payload(data[end:], header, project_id),
                client_ip=_optional_text(header.get("ip")),
                event_id=_optional_text(header.get("id")),
                headers=_mapping(header.get("h")),
            )
        except RecordError:
            raise
        except (KeyError, TypeError, ValueError) as e:
            raise RecordError(f"spool record header is incomplete: {e!r}") from e

    @staticmethod
    def decoded_size(data: bytes | memoryview) -> int:
        """The bytes of an encoded record once decoded (its payload decompressed), read
        from the zstd frame's header: what a digest batch's memory budget counts."""
        if len(data) > _PREFIX.size and data[0] == VERSION:
            start: int = _PREFIX.size + _PREFIX.unpack_from(data)[1]
            if data[start : start + 2] == _GZIP_MAGIC:
                try:
                    offset, length = _sent_span(_header(data[_PREFIX.size : start]).get("g"))
                except RecordError:
                    return len(data)
                return start + offset + length  # what follows the item is under 1 KiB
            if data[start : start + 4] == zstandard.FRAME_HEADER:
                try:
                    size: int = zstandard.frame_content_size(data[start:])
                except zstandard.ZstdError:
                    size = -1
                if size >= 0:
                    return start + size
        return len(data)

    @staticmethod
    def project_of(data: bytes | memoryview) -> int | None:
        """The project of an encoded record, read from its header alone (the payload is
        not copied); None if the record cannot be read."""
        if data[:1] != bytes((_LEGACY_FIRST_BYTE,)) and len(data) >= _PREFIX.size:
            version, length = _PREFIX.unpack_from(data)
            if version == VERSION:
                try:
                    return _integer(_header(data[_PREFIX.size : _PREFIX.size + length])["p"])
                except (RecordError, KeyError, TypeError, ValueError):
                    return None
        try:
            return SpoolRecord.decode(data).project_id
        except RecordError as e:
            return e.project_id


class _Zstd(threading.local):
    """A compressor and a decompressor per thread (neither may be shared by two)."""

    def __init__(self) -> None:
        self.compressor = zstandard.ZstdCompressor(level=_ZSTD_LEVEL)
        self.decompressor = zstandard.ZstdDecompressor()


_ZSTD = _Zstd()


def _payload(data: bytes | memoryview, header: dict[str, Any], project_id: int) -> bytes:
    sent = header.get("g")
    if sent is not None:
        return _inflated(data, sent, project_id)
    if not header.get("z"):
        return bytes(data)  # no second copy when data is bytes
    try:
        payload: bytes = _ZSTD.decompressor.decompress(data)
    except zstandard.ZstdError as e:
        raise RecordError(f"spool record payload does not decompress: {e}", project_id) from e
    return payload


def _inflated(data: bytes | memoryview, sent: Any, project_id: int) -> bytes:
    """The payload of a record written from a ``SentGzip``: the body is inflated up to the
    item's end, and no further."""
    offset, length = _sent_span(sent, project_id)
    end = offset + length
    try:
        out = gunzip_prefix(data, end)
    except BadEncoding as e:
        raise RecordError(f"spool record payload does not inflate: {e}", project_id) from e
    if len(out) < end:
        raise RecordError("spool record payload is shorter than its item", project_id)
    return out[offset:end]


def _sent_span(sent: Any, project_id: int | None = None) -> tuple[int, int]:
    if type(sent) is list and len(sent) == 2:
        offset, length = sent
        if type(offset) is int and type(length) is int and offset >= 0 and length >= 0:
            return offset, length  # (``type(...) is int``: not a bool)
    raise RecordError(f"spool record header 'g' is not [offset, length]: {sent!r}", project_id)


def _header(data: bytes | memoryview) -> dict[str, Any]:
    try:
        header = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise RecordError(f"spool record header is not JSON: {e}") from e
    if not isinstance(header, dict):
        raise RecordError("spool record header is not a JSON object")
    return header


# The kinds by value: a dict lookup costs ~0.05 us, RecordKind(value) ~0.8 (per record).
_KINDS = {kind.value: kind for kind in RecordKind}


def _kind(value: Any, project_id: int) -> RecordKind:
    kind = _KINDS.get(value) if isinstance(value, str) else None
    if kind is None:
        raise RecordError(f"unknown spool record kind {value!r}", project_id)
    return kind


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {value!r}")
    return value


def _optional_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"expected a string, got {value!r}")


def _mapping(value: Any) -> Mapping[str, Any]:
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    raise TypeError(f"expected an object, got {value!r}")


def _decode_legacy(data: bytes | memoryview) -> SpoolRecord:
    """A record of the previous format: ``{"kind", "project_id", "key_id", "received",
    "payload"}`` with the payload normalized at ingestion (an event, a session update, a
    list of aggregates, or the dropped counts)."""
    record = _header(data)
    try:
        project_id = _integer(record["project_id"])
        return SpoolRecord(
            kind=_kind(record["kind"], project_id),
            project_id=project_id,
            key_id=_integer(record["key_id"]),
            received=float(record["received"]),
            payload=orjson.dumps(record["payload"]),
            normalized=True,
        )
    except RecordError:
        raise
    except (KeyError, TypeError, ValueError) as e:
        raise RecordError(f"spool record of the previous format is incomplete: {e!r}") from e
