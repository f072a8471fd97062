"""Load generator: a minimal HTTP/1.1 keep-alive client on asyncio streams.

Runs in its own process (``serve_commands``) so that it never shares an interpreter with
the benchmark's samplers. Requests are pre-encoded bytes; the client parses only the
status line, the headers it needs and a Content-Length (or chunked) body, so it spends
as little CPU as possible: on a 2-core machine every cycle it uses is taken from the
server.

Two modes, both bounded in count and in time and stopping by themselves:

- closed loop: C connections, each sending its next request as soon as the previous
  one was answered; measures the most events/s the server acknowledges;
- open loop: requests scheduled on a fixed timetable at R/s; latency is measured from
  the scheduled time (no coordinated omission) and from the actual send time.
"""

from __future__ import annotations

import asyncio
import gc
import time
from array import array
from collections import Counter
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection as Pipe
from typing import Any

import corpus

REQUEST_TIMEOUT_S = 30.0
HOST = "127.0.0.1"  # the load generator only ever targets the local machine
CONNECT_SPACING_S = 0.005


@dataclass
class PhaseResult:
    """What one phase measured. Times are ``time.monotonic()`` (CLOCK_MONOTONIC: one
    clock for every process on the machine, so the parent can line them up)."""

    mode: str
    sent: int = 0
    acknowledged: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    first_send: float = 0.0
    last_answer: float = 0.0
    # seconds, acknowledged requests only
    latency: array[float] = field(default_factory=lambda: array("d"))
    latency_from_schedule: array[float] = field(default_factory=lambda: array("d"))
    connections: int = 0
    unfinished: int = 0
    cpu_seconds: float = 0.0  # the load generator's own CPU time during the phase


class HttpConnection:
    """One keep-alive connection. ``request`` sends pre-encoded bytes, returns status and body."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.open = True

    @classmethod
    async def connect(cls, port: int) -> HttpConnection:
        reader, writer = await asyncio.open_connection(HOST, port, limit=1 << 20)
        return cls(reader, writer)

    async def request(self, data: bytes) -> tuple[int, bytes]:
        self.writer.write(data)
        await self.writer.drain()
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length, chunked = 0, False
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"connection" and b"close" in value.lower():
                self.open = False
        body = await self._chunked() if chunked else await self.reader.readexactly(length)
        return status, body

    async def _chunked(self) -> bytes:
        parts = []
        while size := int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16):
            parts.append(await self.reader.readexactly(size))
            await self.reader.readexactly(2)
        await self.reader.readuntil(b"\r\n")  # no trailers expected
        return b"".join(parts)

    def close(self) -> None:
        self.open = False
        self.writer.close()


class Requests:
    """Pre-encoded envelope POSTs, handed out once each (event ids never repeat)."""

    def __init__(self, data: corpus.Corpus, port: int, project_id: int, public_key: str) -> None:
        self.port = port
        head = (
            f"POST /api/{project_id}/envelope/ HTTP/1.1\r\n"
            f"Host: {HOST}:{port}\r\n"
            f"X-Sentry-Auth: Sentry sentry_version=7, sentry_key={public_key}, "
            "sentry_client=tracebox-bench/1.0\r\n"
            "Content-Type: application/x-sentry-envelope\r\n"
            "Content-Encoding: gzip\r\n"
        )
        self.items = [
            (f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body, event_id.encode())
            for body, event_id in zip(data.bodies, data.event_ids, strict=True)
        ]
        self.next = 0

    def take(self, count: int) -> Iterator[tuple[bytes, bytes]]:
        if self.next + count > len(self.items):
            raise RuntimeError(f"corpus exhausted: {len(self.items) - self.next} left")
        start, self.next = self.next, self.next + count
        return iter(self.items[start : self.next])


async def _send(conn: HttpConnection, data: bytes, event_id: bytes, out: PhaseResult) -> bool:
    """One request; True when acknowledged (200 with the event id in the body)."""
    out.sent += 1
    try:
        status, body = await asyncio.wait_for(conn.request(data), REQUEST_TIMEOUT_S)
    except (OSError, asyncio.IncompleteReadError, TimeoutError) as e:
        conn.close()
        out.statuses[type(e).__name__] += 1
        return False
    ok = status == 200 and event_id in body
    out.statuses[str(status) if status != 200 or ok else "200-wrong-id"] += 1
    return ok


async def closed_loop(
    requests: Requests, count: int, concurrency: int, max_s: float
) -> PhaseResult:
    """``count`` requests over ``concurrency`` connections, each sending back to back."""
    out = PhaseResult("closed", connections=concurrency)
    work = requests.take(count)
    conns = []
    for _ in range(concurrency):
        conns.append(await HttpConnection.connect(requests.port))
        # Clients do not all connect in the same millisecond; a burst of connects may all
        # be accepted by one web worker, and keep-alive would pin the load on it.
        await asyncio.sleep(CONNECT_SPACING_S)
    out.first_send = time.monotonic()
    deadline = out.first_send + max_s

    async def worker(conn: HttpConnection) -> None:
        for data, event_id in work:
            if time.monotonic() > deadline:
                return
            if not conn.open:
                conn = await HttpConnection.connect(requests.port)
            started = time.monotonic()
            if await _send(conn, data, event_id, out):
                out.last_answer = time.monotonic()
                out.acknowledged += 1
                out.latency.append(out.last_answer - started)

    await asyncio.gather(*(worker(c) for c in conns))
    for conn in conns:
        conn.close()
    out.unfinished = count - out.sent
    return out


async def open_loop(requests: Requests, rate: float, seconds: float, max_conns: int) -> PhaseResult:
    """``rate`` requests/s for ``seconds`` on a fixed timetable, on as many connections as
    needed (up to ``max_conns``; past that, requests wait for a free one, and that wait
    counts in the latency from the schedule)."""
    total = int(rate * seconds)
    out = PhaseResult("open")
    work = requests.take(total)
    idle: asyncio.Queue[HttpConnection] = asyncio.Queue()
    for _ in range(min(16, max_conns)):
        idle.put_nowait(await HttpConnection.connect(requests.port))
        await asyncio.sleep(CONNECT_SPACING_S)
    out.connections = idle.qsize()
    tasks: set[asyncio.Task[None]] = set()

    async def one(data: bytes, event_id: bytes, scheduled: float) -> None:
        if idle.empty() and out.connections < max_conns:
            out.connections += 1
            conn = None
        else:
            conn = await idle.get()
        try:
            if conn is None or not conn.open:
                conn = await HttpConnection.connect(requests.port)
        except OSError as e:
            out.sent += 1
            out.statuses[f"connect-{type(e).__name__}"] += 1
            out.connections -= 1  # the slot is free again
            return
        started = time.monotonic()
        if await _send(conn, data, event_id, out):
            out.last_answer = done = time.monotonic()
            out.acknowledged += 1
            out.latency.append(done - started)
            out.latency_from_schedule.append(done - scheduled)
        idle.put_nowait(conn)

    out.first_send = start = time.monotonic()
    for i, (data, event_id) in enumerate(work):
        scheduled = start + i / rate
        delay = scheduled - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        task = asyncio.create_task(one(data, event_id, scheduled))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    if tasks:
        _, pending = await asyncio.wait(tasks, timeout=REQUEST_TIMEOUT_S)
        out.unfinished = len(pending)
        for task in pending:
            task.cancel()
    while not idle.empty():
        idle.get_nowait().close()
    return out


def serve_commands(pipe: Pipe, settings: dict[str, Any]) -> None:
    """Process entry point: build the corpus, report its statistics, then run the phases
    the parent asks for (``("closed", count, concurrency, max_s)``, ``("open", rate,
    seconds, max_conns)``) until it sends ``None``."""
    started = time.monotonic()
    data = corpus.build(settings["events"], seed=settings["seed"])
    stats = corpus.Corpus.stats(data) | {"build_seconds": time.monotonic() - started}
    pipe.send(stats)
    if (target := pipe.recv()) is None:
        return  # the run ended before the server was up
    port, project_id, public_key = target
    requests = Requests(data, port, project_id, public_key)
    del data
    # The requests live as long as the process: out of the collector's full passes, which
    # otherwise stopped this process's event loop for up to ~50 ms under load, and that
    # counted in the server's latency (docs/performance.md, "Where the p99 goes").
    gc.collect()
    gc.freeze()
    while (command := pipe.recv()) is not None:
        pipe.send(_run(requests, command))


def _run(requests: Requests, command: tuple[Any, ...]) -> PhaseResult:
    kind, *params = command
    phase = closed_loop(requests, *params) if kind == "closed" else open_loop(requests, *params)
    started = time.process_time()
    result = _event_loop_runner()(phase)
    result.cpu_seconds = time.process_time() - started
    return result


def _event_loop_runner() -> Callable[[Coroutine[Any, Any, PhaseResult]], PhaseResult]:
    try:
        import uvloop  # less client CPU per request: more left for the server
    except ImportError:
        return asyncio.run
    return uvloop.run
