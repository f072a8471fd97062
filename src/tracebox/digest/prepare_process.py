"""Preparing digest batches in a child process, so that the digest uses two cores.

Two thirds of the digest's CPU is ``Preparer.prepare`` (parse, normalize, scrub, group,
encode) and one third the batch's transaction. In one process they take turns on one
core; with this child the digest writes batch N while the child prepares batch N+1
(``DigestWorker``), so a batch costs the digest the longer of the two, not their sum
(docs/design.md "Digest pipeline").

The child is ``python -m tracebox.digest.prepare_process``, started by the parent and
spoken to through its standard input and output: each message is a pickled value, then
the raw records whose sizes the value lists. A request's value is ``(configs,
projects, part)``: the ``ProjectConfig`` of each project the child has not seen at this
version, the projects of the batch that still exist, and how many records to decode and
prepare at a time (None: all); its records are the batch's spool records. The answer's
value is the ``PreparedBatch``, its events as tuples (``_compact``), and the seconds the
child spent preparing it and sending the answer before (``PrepareProcess.timed``).
Answers come in the order of the requests. The parent writes a request before it reads
the answer to the one before, from a thread of its own (``_Requests``), so that the
child goes on to the next batch as soon as it has answered. The child keeps no other
state, touches no file and no database, and exits when its input closes (the parent
stopped, or died). It imports no SQLAlchemy (``store.rows``): ~39 MB.

Symbolication reads the database, so the parent prepares a batch itself when one of its
projects has source map artifacts, when the child is off
(``TRACEBOX_DIGEST_PREPARE_PROCESS``) and while the child cannot be started.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import gc
import logging
import operator
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any, NoReturn

from tracebox.digest.prepare import PreparedBatch, Preparer, ProjectConfig, prepare_in_parts
from tracebox.privacy import use_hyperscan
from tracebox.store.rows import PreparedEvent
from tracebox.symbolication.cache import MapCache
from tracebox.symbolication.lookup import NoArtifacts
from tracebox.symbolication.symbolicator import Symbolicator

log = logging.getLogger("tracebox.digest")

# After a failure the child is started again, but not sooner than this after the last
# start: a child that cannot start (or dies on every batch) must not cost a start per batch.
RESTART_INTERVAL_S = 30.0
STOP_TIMEOUT_S = 5.0
# Net allocations of GC-tracked objects between two young collections (Python's default:
# 700). A batch's rows are thousands of them (each event, its tags), so with 700 the
# child collected ~5 times per batch of 400, each time traversing what it made since:
# ~8 us per event (gc.callbacks, 6,000 corpus events). With 10,000 it did not collect at
# all, a batch's rows being freed once sent; cycles, if any, are still collected.
GC_THRESHOLD = 10_000
# What each pipe to the child holds (Linux's default: 64 KiB). A batch's records and
# its answer are ~1-1.5 MB each: with 64 KiB the writer filled the pipe and waited for
# the reader ~20 times per message; with 1 MiB most of it is written at once. The digest
# alone digests ~4% more events per second (docs/performance.md, "The prepare process's
# own time"). Kernel memory, outside both processes' RSS: at most 2 MiB, and only
# while a message is in a pipe. An unprivileged process may set up to
# /proc/sys/fs/pipe-max-size (1 MiB by default).
PIPE_BYTES = 1 << 20
# Buffers one ``os.writev`` takes (Linux: 1,024).
_IOV_MAX = os.sysconf("SC_IOV_MAX")
# A prepared event crosses the pipe as the tuple of its fields (``_compact``).
_EVENT_FIELDS = tuple(f.name for f in dataclasses.fields(PreparedEvent))
_event_fields = operator.attrgetter(*_EVENT_FIELDS)


class ChildGone(Exception):
    """The child is not there (it died, or could not be started): prepare in-process."""


class PrepareProcess:
    """The parent's handle on the child: ``submit`` a batch, later take its ``result``.
    Batches are prepared in the order submitted; the next may be submitted before the
    answer to the one before is taken, so that the child goes on to it without waiting
    (``DigestWorker._commit``). Not thread-safe (the digest's own thread uses it)."""

    def __init__(self, *, log_level: str = "INFO") -> None:
        self._log_level = log_level
        self._proc: subprocess.Popen[bytes] | None = None
        self._requests: _Requests | None = None
        self._versions: dict[int, int] = {}  # project -> config version the child holds
        self._started_at = float("-inf")
        # Tickets: the n-th batch submitted is answered n-th. Answers up to ``_taken``
        # were read (or lost with a child: up to ``_lost_through``).
        self._submitted = 0
        self._taken = 0
        self._lost_through = 0
        self._handed: dict[int, int] = {}  # ticket -> records handed, until answered
        # Records of the last answer taken and the seconds the child spent preparing them
        # (``digest.worker._Balance`` counts what it hands at the child's own speed).
        self.timed: tuple[int, float] | None = None

    @property
    def owed(self) -> int:
        """Batches submitted whose answers are not taken yet."""
        return self._submitted - self._taken

    @property
    def pending(self) -> bool:
        return self.owed > 0

    @property
    def started(self) -> bool:
        """Whether a child was ever started (one is, with the first batch handed)."""
        return self._started_at > float("-inf")

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def submit(
        self,
        records: Sequence[bytes],
        configs: Mapping[int, ProjectConfig],
        part: int | None = None,
    ) -> int:
        """Hand a batch to the child, to be decoded and prepared ``part`` records at a
        time (None: all at once), after the batches handed before; return its ticket
        for ``result``. ``ChildGone`` if the child is not there (nothing handed). The
        request is written by a thread of its own (``_Requests``): this returns at once."""
        requests = self._running()
        fresh = {p: c for p, c in configs.items() if self._versions.get(p) != c.version}
        requests.put(_message((fresh, list(configs), part), records))
        self._versions.update((p, c.version) for p, c in fresh.items())
        self._submitted += 1
        self._handed[self._submitted] = len(records)
        return self._submitted

    def result(self, ticket: int | None = None) -> PreparedBatch:
        """The prepared batch of ``ticket`` (None: the batch last submitted); ``ChildGone``
        if the child died before it answered. Answers to batches submitted before it and
        not taken are dropped, with an error: their batches were not written, so they
        are read again from the spool; a digest that refused every later batch instead
        would never drain them."""
        ticket = self._submitted if ticket is None else ticket
        assert 0 < ticket <= self._submitted, "no such batch was submitted"
        if ticket <= self._lost_through:
            raise ChildGone("the process that had this batch is gone")
        assert ticket > self._taken, "this batch's answer was taken already"
        while self._taken < ticket - 1:
            log.error("digest: the answer to an earlier batch was not taken; dropped")
            self._take()
        return self._take()

    def discard(self) -> None:
        """Drop the answers to the batches in hand (their writes will not happen)."""
        with contextlib.suppress(ChildGone):
            while self.owed:
                self._take()

    def close(self) -> None:
        """Stop the child: its pipes close and it exits; killed if it does not."""
        proc, self._proc = self._proc, None
        requests, self._requests = self._requests, None
        self._forget_owed()
        if proc is None:
            return
        # First the answers' pipe: a child still answering a batch gets EPIPE and exits,
        # and a request the writer still holds fails with it.
        _close(proc.stdout)
        if requests is not None and not requests.stop(STOP_TIMEOUT_S):
            proc.kill()
            requests.stop(None)
        _close(proc.stdin)
        try:
            proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def _take(self) -> PreparedBatch:
        """Read the next answer owed."""
        assert self._proc is not None and self.owed
        try:
            message = _receive(_pipe(self._proc.stdout))
            answer = message[0] if message else None
        except (OSError, EOFError, pickle.UnpicklingError) as e:
            answer = None
            detail = f"{type(e).__name__}: {e}"
        else:
            detail = "it exited"
        batch, events, seconds = (
            answer if isinstance(answer, tuple) and len(answer) == 3 else (None, [], 0.0)
        )
        if not isinstance(batch, PreparedBatch):
            self._lost(f"no answer to a batch ({detail})")
        self._taken += 1
        self.timed = (self._handed.pop(self._taken), seconds)
        return _expanded(batch, events)

    def _running(self) -> _Requests:
        """The running child's requests; one is started if there is none."""
        if self._proc is not None and self._requests is not None and self._proc.poll() is None:
            return self._requests
        if self._proc is not None:
            self._lost(f"it exited with status {self._proc.returncode}")
        if time.monotonic() - self._started_at < RESTART_INTERVAL_S:
            raise ChildGone("started less than a restart interval ago")
        self._started_at = time.monotonic()
        self._versions.clear()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", __name__, "--log-level", self._log_level],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                close_fds=True,
            )
        except OSError as e:
            log.error("digest: cannot start the prepare process (%s); preparing in-process", e)
            raise ChildGone(str(e)) from e
        _widen_pipes(self._proc)
        self._requests = _Requests(self._proc)
        return self._requests

    def _lost(self, why: str) -> NoReturn:
        log.error("digest: the prepare process failed (%s); preparing in-process", why)
        proc, self._proc = self._proc, None
        requests, self._requests = self._requests, None
        self._forget_owed()
        if proc is not None:
            proc.kill()
            proc.wait()
            if requests is not None:  # its write, if any, fails now: the child is gone
                requests.stop(None)
            _close(proc.stdout)
            _close(proc.stdin)
        raise ChildGone(why)

    def _forget_owed(self) -> None:
        """The answers owed will not come: their batches are prepared in-process."""
        self._lost_through = self._taken = self._submitted
        self._handed.clear()


class _Requests:
    """The child's input, written by a thread of its own. The digest hands a batch before
    it takes the answer to the one before; the child reads that request only once its
    answer is out. Written by the digest's own thread, a request larger than the pipe
    would wait for the child, the child for the digest to read its answer, and neither
    would move. Each request is one write (``os.writev`` of the records as they are, no
    copy): the thread takes the GIL back once per request, not once per record (with the
    digest's thread busy preparing, each return could wait up to
    ``sys.getswitchinterval()``)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self._proc = proc
        self._fd = _pipe(proc.stdin).fileno()
        self._queue: queue.SimpleQueue[list[bytes] | None] = queue.SimpleQueue()
        self._stopping = False
        self._thread = threading.Thread(
            target=self._run, name="tracebox-prepare-requests", daemon=True
        )
        self._thread.start()

    def put(self, message: list[bytes]) -> None:
        self._queue.put(message)

    def stop(self, timeout: float | None) -> bool:
        """Write what was put, then stop; whether the thread stopped within ``timeout``."""
        if not self._stopping:
            self._stopping = True
            self._queue.put(None)
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        failed = False
        while (message := self._queue.get()) is not None:
            if failed:
                continue
            try:
                _write_all(self._fd, message)
            except OSError as e:
                # The child died, or its input is broken: a child still alive would wait
                # for the rest of a request, and the digest for its answer. Killed, its
                # answers end, and the digest's handle finds it gone (``_take``).
                failed = True
                log.debug("digest: a request to the prepare process failed: %s", e)
                with contextlib.suppress(OSError):
                    self._proc.kill()


def _write_all(fd: int, message: Sequence[bytes]) -> None:
    """Write the buffers of ``message`` in order, as few calls as the system allows."""
    views = [memoryview(b) for b in message if len(b)]
    first = 0
    while first < len(views):
        written = os.writev(fd, views[first : first + _IOV_MAX])
        while written:  # past the buffers written whole, into the first one left
            size = len(views[first])
            if written < size:
                views[first] = views[first][written:]
                break
            written -= size
            first += 1


def _widen_pipes(proc: subprocess.Popen[bytes]) -> None:
    """Let each pipe to the child hold ``PIPE_BYTES`` (Linux; elsewhere, or if the kernel
    refuses, the default stays)."""
    setpipe = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setpipe is None:
        return
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                fcntl.fcntl(pipe.fileno(), setpipe, PIPE_BYTES)


def _close(pipe: IO[bytes] | None) -> None:
    """Close a pipe to the child; one that is gone already is no error."""
    if pipe is not None:
        with contextlib.suppress(OSError):
            pipe.close()


def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
    assert stream is not None
    return stream


def _send(stream: IO[bytes], value: Any) -> None:
    """An answer: ``value`` pickled straight into the stream (no copy of the pickle in
    memory; both processes' memory counts toward the server's), with no records."""
    pickle.dump((value, []), stream, protocol=pickle.HIGHEST_PROTOCOL)
    stream.flush()


def _message(value: Any, records: Sequence[bytes]) -> list[bytes]:
    """A request's buffers: ``value`` and the sizes of ``records`` pickled, then the
    records as they are (``_Requests`` writes them at once)."""
    header = pickle.dumps((value, [len(r) for r in records]), protocol=pickle.HIGHEST_PROTOCOL)
    return [header, *records]


def _receive(stream: IO[bytes]) -> tuple[Any, list[memoryview]] | None:
    """The next message (value and records), or None at the end of the stream. The
    records are read at once and handed out as views of those bytes: one read per
    message, not one or two per record (the records cost the child ~2 us less each, the
    parent writing them ~2 us less too: fewer wake-ups). ``SpoolRecord.decode`` copies
    the payload out of its view, so the bytes go once the records are decoded."""
    if not stream.peek(1):  # type: ignore[attr-defined]
        return None
    value, sizes = pickle.load(stream)
    data = memoryview(_exactly(stream, sum(sizes)))
    records, start = [], 0
    for size in sizes:
        records.append(data[start : start + size])
        start += size
    return value, records


def _exactly(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("message cut short")
    return data


def _compact(batch: PreparedBatch) -> tuple[PreparedBatch, list[tuple[Any, ...]]]:
    """``batch`` as it is pickled: its events as tuples of their fields. An instance is
    pickled with its fields' names and rebuilt field by field; the tuples take ~15% less
    CPU to pickle and, with ``_event``, ~17% less to unpickle (callgrind, 400 corpus
    events: 33.7k -> 29.2k and 44.7k -> 37.0k instructions per event)."""
    return dataclasses.replace(batch, events=[]), [_event_fields(e) for e in batch.events]


def _expanded(batch: PreparedBatch, events: list[tuple[Any, ...]]) -> PreparedBatch:
    """The batch ``_compact`` made, whole again."""
    batch.events = [_event(fields) for fields in events]
    return batch


def _event(fields: tuple[Any, ...]) -> PreparedEvent:
    """The event, rebuilt as pickle rebuilds an instance: its fields set at once, without
    the frozen ``__init__`` (which sets them one ``object.__setattr__`` at a time)."""
    event: PreparedEvent = object.__new__(PreparedEvent)
    event.__dict__.update(zip(_EVENT_FIELDS, fields, strict=True))
    return event


def _always(configs: Mapping[int, ProjectConfig]) -> Callable[[Any], Mapping[int, ProjectConfig]]:
    """``configs`` for every part (the parent sent them for the whole batch)."""
    return lambda _records: configs


def serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """The child's loop: prepare every batch it is sent, until its input ends."""
    # Handed only projects without artifacts (``DigestWorker._hand``): their frames are
    # explained as unmapped here as the digest would, without its database.
    preparer = Preparer(symbolicator=Symbolicator(NoArtifacts(), MapCache(0)))
    configs: dict[int, ProjectConfig] = {}
    # The CPU seconds the last answer took to pickle and send (~1 MB: ~8% of this
    # process's time), counted with the next answer's: counted nowhere, the digest
    # handed this process more than it could do meanwhile, and waited for it. CPU, not
    # wall: an answer that waits for the digest to read it costs this process nothing.
    sending = 0.0
    while (request := _receive(requests)) is not None:
        (fresh, projects, part), raw = request
        del request
        configs.update(fresh)
        existing = {p: configs[p] for p in projects}
        started = time.perf_counter()
        prepared = prepare_in_parts(preparer, raw, _always(existing), part)
        seconds = time.perf_counter() - started + sending
        cpu = time.thread_time()
        _send(answers, (*_compact(prepared), seconds))
        sending = time.thread_time() - cpu


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    from tracebox import logs

    parser = argparse.ArgumentParser(prog=f"python -m {__name__}", description=__doc__)
    parser.add_argument("--log-level", default="INFO")
    args = parser.parse_args(argv)
    logs.configure(args.log_level)
    # The terminal's Ctrl-C and serve's SIGTERM reach the whole group: the parent finishes
    # its batch first, so this one waits for its input to close instead.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    gc.set_threshold(GC_THRESHOLD)
    use_hyperscan()  # this process does most of the preparing: worth the library's memory
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr  # a stray print must not corrupt the answers
    with contextlib.suppress(BrokenPipeError, EOFError):  # the parent died mid-message
        serve(sys.stdin.buffer, answers)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
