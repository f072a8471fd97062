"""Attachments: files SDKs send with an event (docs/sdk-data.md "Attachments").

Bytes live in the database, like source map artifacts, so every node's web workers can
serve what any node's digest stored, and removing an attachment is part of the same
transaction as whatever removes it (no file to unlink after a commit, nothing to leak
when a transaction rolls back). Each file is kept as zstd-compressed chunks of at most
``CHUNK_BYTES``: a download streams chunk by chunk, and no row holds a 100 MiB value.

A project keeps at most ``max_project_bytes`` (bytes as received); the digest drops new
attachments past it. Retention and deletions call ``delete_for_events`` and
``delete_older_than``; ``usage`` says what a project stores.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, Connection, func, select

from tracebox.store.dialect import insert
from tracebox.store.rows import CHUNK_BYTES as CHUNK_BYTES
from tracebox.store.rows import NewAttachment
from tracebox.store.tables import attachment_chunks, attachments

OVER_QUOTA = "attachment_over_quota"  # the dropped-items reason past the project's cap


@dataclass(frozen=True)
class Attachment:
    id: int
    project_id: int
    event_id: str
    name: str
    content_type: str
    attachment_type: str
    size: int
    created_at: float


_COLUMNS = (
    attachments.c.id,
    attachments.c.project_id,
    attachments.c.event_id,
    attachments.c.name,
    attachments.c.content_type,
    attachments.c.attachment_type,
    attachments.c.size,
    attachments.c.created_at,
)


def write(
    conn: Connection, new: Sequence[NewAttachment], *, max_project_bytes: int
) -> dict[tuple[int, str], int]:
    """Store ``new`` (a file already stored with its event is skipped); return the
    attachments dropped per (project, reason): those past the project's cap."""
    dropped: dict[tuple[int, str], int] = defaultdict(int)
    used = {p: project_bytes(conn, p) for p in {a.project_id for a in new}}
    for attachment in new:
        if used[attachment.project_id] + attachment.size > max_project_bytes:
            dropped[(attachment.project_id, OVER_QUOTA)] += 1
            continue
        if _insert(conn, attachment):
            used[attachment.project_id] += attachment.size
    return dict(dropped)


def _insert(conn: Connection, a: NewAttachment) -> bool:
    row = {
        "project_id": a.project_id,
        "event_id": a.event_id,
        "name": a.name,
        "content_type": a.content_type,
        "attachment_type": a.attachment_type,
        "size": a.size,
        "stored_bytes": sum(len(c) for c in a.chunks),
        "sha1": a.sha1,
        "created_at": a.created_at,
    }
    stmt = (
        insert(conn, attachments)
        .values(row)
        .on_conflict_do_nothing(index_elements=["project_id", "event_id", "name", "sha1"])
        .returning(attachments.c.id)
    )
    attachment_id = conn.execute(stmt).scalar()
    if attachment_id is None:
        return False  # the same file of the same event: an SDK sent it again
    if a.chunks:
        rows = [
            {"attachment_id": attachment_id, "seq": n, "data": data}
            for n, data in enumerate(a.chunks)
        ]
        conn.execute(attachment_chunks.insert(), rows)
    return True


def project_bytes(conn: Connection, project_id: int) -> int:
    """Bytes (as received) the project's attachments hold (ix_attachments_project_created)."""
    query = select(func.coalesce(func.sum(attachments.c.size), 0)).where(
        attachments.c.project_id == project_id
    )
    return int(conn.execute(query).scalar_one())


def usage(conn: Connection, project_id: int) -> tuple[int, int]:
    """(attachments, bytes as received) the project stores, for the usage view."""
    query = select(func.count(), func.coalesce(func.sum(attachments.c.size), 0)).where(
        attachments.c.project_id == project_id
    )
    items, size = conn.execute(query).one()
    return int(items), int(size)


def for_event(conn: Connection, project_id: int, event_id: str) -> list[Attachment]:
    query = (
        select(*_COLUMNS)
        .where(attachments.c.project_id == project_id, attachments.c.event_id == event_id)
        .order_by(attachments.c.id)
    )
    return [Attachment(*row) for row in conn.execute(query)]


def get(conn: Connection, project_id: int, attachment_id: int) -> Attachment | None:
    query = select(*_COLUMNS).where(
        attachments.c.id == attachment_id, attachments.c.project_id == project_id
    )
    row = conn.execute(query).first()
    return Attachment(*row) if row else None


def chunk_count(conn: Connection, attachment_id: int) -> int:
    query = select(func.count()).where(attachment_chunks.c.attachment_id == attachment_id)
    return int(conn.execute(query).scalar_one())


def chunk(conn: Connection, attachment_id: int, seq: int) -> bytes | None:
    """One compressed chunk; the caller decompresses (``store.payloads``-free: plain zstd)."""
    query = select(attachment_chunks.c.data).where(
        attachment_chunks.c.attachment_id == attachment_id, attachment_chunks.c.seq == seq
    )
    data = conn.execute(query).scalar()
    return bytes(data) if data is not None else None


def delete_for_events(
    conn: Connection, project_id: int, event_ids: Sequence[str]
) -> tuple[int, int]:
    """Remove the attachments of these events of a project (with their chunks); return
    (attachments, bytes) removed. For retention and deletions of events."""
    removed = (0, 0)
    for chunk_ids in _chunks(list(event_ids), 400):
        where = (attachments.c.project_id == project_id) & attachments.c.event_id.in_(chunk_ids)
        removed = _add(removed, _delete(conn, where))
    return removed


def delete_older_than(
    conn: Connection, project_id: int, before: float, limit: int
) -> tuple[int, int]:
    """Remove up to ``limit`` of the project's attachments stored before ``before`` (unix
    seconds), oldest first; return (attachments, bytes) removed."""
    ids = (
        select(attachments.c.id)
        .where(attachments.c.project_id == project_id, attachments.c.created_at < before)
        .order_by(attachments.c.created_at)
        .limit(limit)
    )
    found = list(conn.execute(ids).scalars())
    return _delete(conn, attachments.c.id.in_(found)) if found else (0, 0)


def _delete(conn: Connection, where: ColumnElement[bool]) -> tuple[int, int]:
    query = select(attachments.c.id, attachments.c.size).where(where)
    found = conn.execute(query).all()
    if not found:
        return 0, 0
    ids = [row.id for row in found]
    # Chunks first: SQLite enforces ON DELETE CASCADE only with foreign keys on.
    conn.execute(attachment_chunks.delete().where(attachment_chunks.c.attachment_id.in_(ids)))
    conn.execute(attachments.delete().where(attachments.c.id.in_(ids)))
    return len(found), sum(int(row.size) for row in found)


def _add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return a[0] + b[0], a[1] + b[1]


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
