"""The on-disk format of spool segments, shared by the writer and the reader.

A segment file is ``MAGIC`` followed by records, each framed as::

    word: uint32 little-endian | crc: uint32 little-endian | payload

where ``word = payload length | MORE`` (``MORE``, the top bit, is set on every record
of an ``append`` call but its last) and ``crc = crc32(word bytes + payload)``.
Covering the word means a zero-filled tail (what a power loss can leave) is a bad
record, not an endless run of empty ones.

A record is returned only once every record of its call is in the file, so a call is
all-or-nothing even when its writer dies halfway through writing it. A call that runs
past the end of the file is *torn*: its writer is still writing it, or died while
writing it (then it was never acknowledged).

Segment files are named ``{time_ns:020d}-{hostname}-{pid}-{seq:06d}.seg``, so names are
unique across processes, restarts and nodes and sort in creation order. A segment is
*live* while its writer holds an exclusive ``flock`` on it, and *finished* otherwise:
the writer rotated past it, closed it, or died (the kernel drops the lock of a dead
process, so a reused pid cannot keep a dead writer's segment live). Unlike a pid check
this also works across pid namespaces (containers sharing the volume on one host). It
needs a local filesystem with working ``flock``; and a process forked (without exec)
from a writer keeps its segment live until the child exits. New segments appear only
already locked: they are created as ``.tmp`` and renamed once locked.

Positions are byte offsets from the start of the file; the first record is at
``FILE_HEADER_BYTES``. A finished segment never changes again, so once the reader has
skipped its torn or corrupt tail, its position equals its size.

A record is visible to the reader as soon as it is written, slightly before its
fsync; an append that then fails is cut back off the file (best effort). So delivery
is exactly-once (with the digest's cursors) for acknowledged records, and at most
at-least-once for a record whose writer failed or died before acknowledging it.
"""

from __future__ import annotations

import enum
import errno
import fcntl
import os
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO

MAGIC = b"TBSPOOL\x01"
FILE_HEADER_BYTES = len(MAGIC)
RECORD_HEADER = struct.Struct("<II")
MORE = 1 << 31
MAX_RECORD_BYTES = MORE - 1
SEGMENT_SUFFIX = ".seg"
TMP_SUFFIX = ".tmp"


def frame(records: Sequence[bytes]) -> bytes:
    """Frame one call's records into one blob, written with a single write call."""
    parts: list[bytes] = []
    for index, record in enumerate(records):
        if len(record) > MAX_RECORD_BYTES:
            raise ValueError(f"spool record of {len(record)} bytes is too large")
        word = len(record) | (MORE if index < len(records) - 1 else 0)
        parts.append(RECORD_HEADER.pack(word, _crc(word, record)))
        parts.append(record)
    return b"".join(parts)


def _crc(word: int, payload: bytes) -> int:
    return zlib.crc32(payload, zlib.crc32(word.to_bytes(4, "little")))


class Stop(enum.Enum):
    """Why a scan stopped."""

    END = "end"  # reached the end of the file exactly
    LIMIT = "limit"  # returned max_records
    TORN = "torn"  # a call runs past the end of the file
    CORRUPT = "corrupt"  # a record's checksum does not match


@dataclass(frozen=True)
class Scan:
    records: list[bytes]
    end: int  # offset just past the last record returned
    stop: Stop


def scan(file: BinaryIO, offset: int, size: int, max_records: int) -> Scan:
    """Read up to ``max_records`` records of complete calls from ``offset`` up to ``size``.

    ``size`` bounds the scan (a snapshot of the file size), so a corrupt length never
    makes us allocate or read more than the file holds. ``offset`` may be inside a
    call (a previous scan hit ``max_records`` there): its remaining records are a call.
    """
    records: list[bytes] = []
    while len(records) < max_records:
        if offset >= size:
            return Scan(records, offset, Stop.END)
        call = _scan_call(file, offset, size, max_records - len(records))
        if isinstance(call, Stop):
            return Scan(records, offset, call)
        records.extend(call.records)
        offset = call.end
    return Scan(records, offset, Stop.LIMIT)


def _scan_call(file: BinaryIO, offset: int, size: int, limit: int) -> Scan | Stop:
    """The first ``limit`` records of the call at ``offset``, if the whole call is there.

    Records past ``limit`` are only checked to be present; a later scan reads them.
    """
    file.seek(offset)
    records: list[bytes] = []
    end = position = offset
    while True:
        if position + RECORD_HEADER.size > size:
            return Stop.TORN
        word, crc = RECORD_HEADER.unpack(file.read(RECORD_HEADER.size))
        length = word & MAX_RECORD_BYTES
        next_position = position + RECORD_HEADER.size + length
        if next_position > size:
            return Stop.TORN
        if len(records) < limit:
            payload = file.read(length)
            if _crc(word, payload) != crc:
                return Stop.CORRUPT
            records.append(payload)
            end = next_position
        else:
            file.seek(next_position)
        position = next_position
        if not word & MORE:
            return Scan(records, end, Stop.END)


def has_magic(file: BinaryIO) -> bool:
    file.seek(0)
    return file.read(FILE_HEADER_BYTES) == MAGIC


def is_finished(fd: int) -> bool:
    """True when no writer holds the segment open (probed with a shared, non-blocking lock).

    The shared lock we may take here is released when the caller closes ``fd``; it
    never blocks a writer, because writers lock only files they have just created.
    """
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return False
        raise
    return True


def fsync_directory(directory: os.PathLike[str] | str) -> None:
    """Make a file's creation or rename in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
