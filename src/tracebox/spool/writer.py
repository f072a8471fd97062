"""SpoolWriter: one per process; appends are acknowledged only once they are fsynced."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Sequence
from pathlib import Path

from tracebox import errors
from tracebox.spool.committer import Committer, Outcome, Pending
from tracebox.spool.format import frame, fsync_directory
from tracebox.spool.space import SpaceAccount


class SpoolWriter:
    """Appends records to this process's own segment files.

    Refuses (``SpoolFull``, ``DiskFull``: 503) before writing anything when the spool
    holds more than ``max_undigested_bytes`` not yet digested, or the disk would keep
    less than ``min_free_bytes`` free. A segment is finished once it reaches
    ``segment_bytes`` or ``segment_max_age_s``, so the digest can delete what it has
    consumed even when few records arrive.

    Durability contract: when ``append`` returns, every record of the call has been
    written and fsynced (and the name of its segment file too), so a SIGKILL or power
    loss at any later moment cannot lose it. A call is all-or-nothing for the reader:
    its records are framed into one contiguous write. When ``append`` raises, nothing
    was acknowledged; the records may still reach the digest (at-least-once), which
    the digest's idempotence makes harmless.

    Many asyncio tasks may call ``append`` concurrently: a committer thread batches
    everything queued while the previous fsync ran into one write and one fsync, so
    the event loop never blocks on the disk. One writer per process; the segments it
    writes are told apart from other processes' by their names.
    """

    def __init__(
        self,
        directory: Path,
        *,
        segment_bytes: int,
        max_undigested_bytes: int,
        commit_interval_s: float,
        retry_after: int,
        segment_max_age_s: float = 60.0,
        min_free_bytes: int = 0,
        reminder_seconds: float = 60.0,
    ) -> None:
        self._directory = directory
        self._retry_after = retry_after
        self._space = SpaceAccount(
            directory,
            max_undigested_bytes=max_undigested_bytes,
            min_free_bytes=min_free_bytes,
            retry_after=retry_after,
            reminder_seconds=reminder_seconds,
        )
        self._committer = Committer(
            directory,
            segment_bytes=segment_bytes,
            segment_max_age_s=segment_max_age_s,
            commit_interval_s=commit_interval_s,
            reminder_seconds=reminder_seconds,
        )
        self._started = False

    async def start(self) -> None:
        """Create the directory, open the first segment, start the committer."""
        await asyncio.to_thread(self.start_sync)

    async def append(self, records: Sequence[bytes]) -> None:
        """Return once all ``records`` are durable; raise ``Unavailable`` (``SpoolFull``,
        ``DiskFull``, a failed write) otherwise."""
        blob = self._admit(records)
        del records  # framed into blob: not held twice while the fsync is awaited
        if not blob:
            return
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[Outcome] = loop.create_future()
        self._committer.submit(Pending(blob, waiter, loop))
        self._raise_for(await waiter)

    async def close(self) -> None:
        """Commit what is queued, then close (finish) the current segment."""
        await asyncio.to_thread(self.close_sync)

    def start_sync(self) -> None:
        """``start`` for code without an event loop (tests, CLI tools)."""
        if self._started:
            raise RuntimeError("spool writer already started")
        self._directory.mkdir(parents=True, exist_ok=True)
        # A new directory's own name must be durable before any record in it is.
        fsync_directory(self._directory.resolve().parent)
        self._committer.start()
        self._started = True

    def append_sync(self, records: Sequence[bytes]) -> None:
        """``append`` for code without an event loop; blocks until durable."""
        blob = self._admit(records)
        if not blob:
            return
        waiter: concurrent.futures.Future[Outcome] = concurrent.futures.Future()
        self._committer.submit(Pending(blob, waiter, None))
        self._raise_for(waiter.result())

    def close_sync(self) -> None:
        """``close`` for code without an event loop."""
        self._committer.stop()

    def _admit(self, records: Sequence[bytes]) -> bytes:
        if not self._started:
            raise RuntimeError("spool writer not started")
        blob = frame(records)
        if blob:
            self._space.admit(len(blob))
        return blob

    def _raise_for(self, outcome: Outcome) -> None:
        if isinstance(outcome, OSError):
            raise errors.Unavailable(
                f"spool write failed: {outcome}", retry_after=self._retry_after
            ) from outcome
        if outcome is not None:
            raise RuntimeError("spool commit failed") from outcome
