"""Counters shared by every web worker of a node: a small file in the data directory,
mapped into each process and changed under an exclusive ``flock``.

Two tables: window counters (items admitted in one fixed window of a quota or of spike
protection; a slot is free again once its window has passed) and refusal counters (items
refused per project, hour, data category and reason; kept until the cleanup loop moves
them into the database, so its scan under the lock stays short). Open addressing; a
full neighbourhood admits rather than refuses (the limit is a guard, never a reason to
lose data because of a table), and says so in the log.

Measured cost of one admission with three limits: see docs/performance.md.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import mmap
import os
import struct
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tracebox.store.quotas import CATEGORIES

log = logging.getLogger("tracebox.ingest")

FILE_NAME = "ingest-counters.bin"
MAGIC = b"TBCOUNT1"
HEADER = struct.Struct("<8sI")  # magic, slots
SLOT = struct.Struct("<QQq")  # key, expires (unix seconds; 0: free), count
SLOTS = 16384  # window counters: a few per project, category and window in use (384 KiB)
REFUSAL_SLOTS = 1024  # refusal counters, drained every few seconds: a short scan
PROBES = 32
WINDOW, REFUSAL = 1, 2  # the key's top byte
# Fixed codes, so a refusal counter's key says what it counts (append only).
REASONS = ("rate_limit", "quota", "spike_protection", "invalid", "too_large")
NEVER = 2**63 - 1


@dataclass(frozen=True)
class Check:
    """One limit an admission must fit: at most ``limit`` in the window ending at
    ``expires`` (unix seconds), counted under ``key`` (``window_key``)."""

    key: int
    limit: int
    expires: int
    retry_after: int  # seconds, if refused
    reason: str  # quota, rate_limit, spike_protection
    scope: str  # project or key (X-Sentry-Rate-Limits)


def window_key(*parts: object) -> int:
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=7).digest()
    return (WINDOW << 56) | int.from_bytes(digest, "little")


def refusal_key(project_id: int, hour: int, category: str, reason: str) -> int:
    """kind (8 bits) | hour modulo 256 (8) | project id (32) | category (8) | reason (8)."""
    category_code = CATEGORIES.index(category) if category in CATEGORIES else 0
    return (
        REFUSAL << 56
        | (hour % 256) << 48
        | (project_id & 0xFFFFFFFF) << 16
        | category_code << 8
        | REASONS.index(reason)
    )


class SharedCounters:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread_lock = threading.Lock()
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        size = HEADER.size + (SLOTS + REFUSAL_SLOTS) * SLOT.size
        with self._locked_fd():
            if os.fstat(self._fd).st_size != size:
                os.ftruncate(self._fd, 0)  # another layout (an older release): start over
                os.ftruncate(self._fd, size)
            self._map = mmap.mmap(self._fd, size)
            magic, _ = HEADER.unpack_from(self._map, 0)
            if magic != MAGIC:
                self._map[:] = bytes(size)
                HEADER.pack_into(self._map, 0, MAGIC, SLOTS)

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> SharedCounters:
        data_dir.mkdir(parents=True, exist_ok=True)
        return cls(data_dir / FILE_NAME)

    def close(self) -> None:
        self._map.close()
        os.close(self._fd)

    @contextmanager
    def _locked_fd(self) -> Iterator[None]:
        with self._thread_lock:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    # --- window counters ----------------------------------------------------------------

    def admit(self, checks: Sequence[Check], n: int, now: float) -> Check | None:
        """Count ``n`` items against every check, or none of them: the first check they
        would exceed is returned and nothing is counted."""
        with self._locked_fd():
            for check in checks:
                if self._count(check.key, now) + n > check.limit:
                    return check
            for check in checks:
                self._add(check.key, n, check.expires, now)
        return None

    def full(self, checks: Sequence[Check], now: float) -> Check | None:
        """The first check with no room for even one more item."""
        with self._locked_fd():
            return next((c for c in checks if self._count(c.key, now) >= c.limit), None)

    def count(self, key: int, now: float) -> int:
        with self._locked_fd():
            return self._count(key, now)

    def put(self, key: int, value: int, expires: int, now: float) -> None:
        """Set a slot (spike protection's state) until ``expires``."""
        with self._locked_fd():
            index = self._find(key, now, create=True)
            if index is not None:
                SLOT.pack_into(self._map, self._offset(index), key, expires, value)

    # --- refusal counters ---------------------------------------------------------------

    def refused(self, project_id: int, category: str, reason: str, n: int, now: float) -> None:
        if not 0 < project_id <= 0xFFFFFFFF:
            return  # not a project this instance can have: nothing to count against
        key = refusal_key(project_id, int(now // 3600), category, reason)
        with self._locked_fd():
            self._add(key, n, NEVER, now)

    def drain_refused(self, now: float) -> dict[tuple[int, int, str, str], int]:
        """Take every refusal counter out: (project, hour, category, reason) -> count.
        The hour is known modulo 256 hours; counters are drained every few seconds."""
        found: dict[tuple[int, int, str, str], int] = {}
        current = int(now // 3600)
        with self._locked_fd():
            for index in range(SLOTS, SLOTS + REFUSAL_SLOTS):
                key, _, count = SLOT.unpack_from(self._map, self._offset(index))
                if key >> 56 != REFUSAL:
                    continue
                hour = current - ((current - (key >> 48 & 0xFF)) % 256)
                project_id = key >> 16 & 0xFFFFFFFF
                category = CATEGORIES[key >> 8 & 0xFF]
                reason = REASONS[key & 0xFF]
                found[(project_id, hour, category, reason)] = (
                    found.get((project_id, hour, category, reason), 0) + count
                )
                SLOT.pack_into(self._map, self._offset(index), 0, 0, 0)
        return found

    # --- the table ----------------------------------------------------------------------

    def _offset(self, index: int) -> int:
        return HEADER.size + index * SLOT.size

    def _find(self, key: int, now: float, *, create: bool) -> int | None:
        """The slot holding ``key``; with ``create``, else a free (or expired) one."""
        first, slots = (SLOTS, REFUSAL_SLOTS) if key >> 56 == REFUSAL else (0, SLOTS)
        free = None
        start = (key * 0x9E3779B97F4A7C15 >> 17) % slots  # spreads structured keys
        for probe in range(PROBES):
            index = first + (start + probe) % slots
            found, expires, _ = SLOT.unpack_from(self._map, self._offset(index))
            if found == key and (expires > now):
                return index
            if free is None and (found == 0 or (found >> 56 == WINDOW and expires <= now)):
                free = index
        if create and free is None:
            log.warning("shared ingest counters are full around one key; admitting")
        return free if create else None

    def _count(self, key: int, now: float) -> int:
        index = self._find(key, now, create=False)
        return SLOT.unpack_from(self._map, self._offset(index))[2] if index is not None else 0

    def _add(self, key: int, n: int, expires: int, now: float) -> None:
        index = self._find(key, now, create=True)
        if index is None:
            return
        found, _, count = SLOT.unpack_from(self._map, self._offset(index))
        count = count if found == key else 0
        SLOT.pack_into(self._map, self._offset(index), key, expires, count + n)
