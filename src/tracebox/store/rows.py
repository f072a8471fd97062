"""The rows the digest prepares for the store: plain data, no SQL, so that the prepare
process (``digest.prepare_process``) builds them without loading the database layer.
Each store module that writes one re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass

CHUNK_BYTES = 1024 * 1024  # uncompressed bytes per stored attachment chunk


@dataclass(frozen=True)
class PreparedEvent:
    project_id: int
    event_id: str
    grouping_hash: str
    grouping_version: str
    fingerprint: str  # JSON list of grouping components
    title: str
    type: str
    value: str
    culprit: str
    platform: str
    level: str
    timestamp: float
    received: float
    environment: str | None
    release: str | None
    user_key: str | None
    payload: bytes  # compressed normalized event
    # Hashes of older grouping versions, tried in order when ``grouping_hash`` is unknown.
    fallback_hashes: tuple[str, ...] = ()
    tags: tuple[tuple[str, str], ...] = ()  # counted in error_tags (protocol.tags)


@dataclass(frozen=True)
class NewAttachment:
    project_id: int
    event_id: str
    name: str
    content_type: str
    attachment_type: str
    size: int  # bytes as received
    sha1: str
    chunks: tuple[bytes, ...]  # zstd-compressed, each at most CHUNK_BYTES uncompressed
    created_at: float


@dataclass(frozen=True)
class NewFeedback:
    project_id: int
    feedback_id: str
    event_id: str | None
    name: str
    email: str
    comments: str
    url: str | None
    source: str
    release: str | None
    environment: str | None
    created_at: float


@dataclass(frozen=True)
class NewLog:
    project_id: int
    timestamp: float
    level: str
    severity_number: int | None
    body: str
    trace_id: str | None
    span_id: str | None
    release: str | None
    environment: str | None
    logger: str | None
    attributes: str  # JSON object
    size: int  # bytes counted against the project's cap
