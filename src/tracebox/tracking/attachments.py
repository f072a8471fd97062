"""Serving an attachment: its bytes, streamed chunk by chunk, and the headers that make a
browser save it and never render it (the UI and ``/api/v4`` both use these).

Attachments are whatever the SDK sent: an HTML file or an SVG with script in it must not
run on Tracebox's origin. So every download is ``application/octet-stream`` (the
declared type is shown, not served), ``Content-Disposition: attachment``, ``nosniff``,
and a sandboxing ``Content-Security-Policy`` in case a browser renders it anyway.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import quote

import zstandard

from tracebox.errors import NotFound
from tracebox.store import Database
from tracebox.store import attachments as store
from tracebox.store.attachments import Attachment

_UNSAFE_NAME = re.compile(r'[\x00-\x1f\x7f"\\/;]+')
MAX_NAME_CHARS = 200


def find(db: Database, project_id: int, attachment_id: int) -> Attachment:
    """The project's attachment, or NotFound (404 on every surface)."""
    with db.read() as conn:
        found = store.get(conn, project_id, attachment_id)
    if found is None:
        raise NotFound("Attachment")
    return found


def download_headers(attachment: Attachment) -> dict[str, str]:
    return {
        "Content-Type": "application/octet-stream",
        "Content-Disposition": content_disposition(attachment.name),
        "Content-Length": str(attachment.size),
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
        "Cache-Control": "private, no-store",
    }


def content_disposition(name: str) -> str:
    """``attachment`` with an ASCII ``filename`` fallback and the exact name as RFC 5987
    ``filename*``; path separators, quotes and control characters never pass."""
    clean = _UNSAFE_NAME.sub("_", name).strip(" .")[:MAX_NAME_CHARS] or "attachment"
    ascii_name = clean.encode("ascii", "replace").decode().replace("?", "_")
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(clean, safe='')}"


def stream(db: Database, attachment: Attachment) -> Iterator[bytes]:
    """The attachment's bytes, one decompressed chunk (at most 1 MiB) at a time: a
    download of any size holds one chunk in memory."""
    with db.read() as conn:
        count = store.chunk_count(conn, attachment.id)
    decompressor = zstandard.ZstdDecompressor()
    for seq in range(count):
        with db.read() as conn:
            data = store.chunk(conn, attachment.id, seq)
        if data is None:
            return  # removed while being downloaded
        yield decompressor.decompress(data)
