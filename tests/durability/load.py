"""Bounded, paced load for the fault tests: sender threads that record every answer.

Each sender posts one envelope at a time (an event, a ``sessions`` aggregate counting one
exited session, and a ``profile`` item that is counted as dropped), at most ``rate``
per second, until stopped or ``max_seconds`` have passed. An envelope acknowledged with
200 must show up exactly once: its event row, one exited session, one dropped profile.
"""

from __future__ import annotations

import base64
import os
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime

import httpx
import orjson

from tests.helpers import wait_for

RELEASE = "shop@1.0"


def incompressible(chars: int) -> str:
    """``chars`` characters the spool's compression cannot shrink below 3/4 of their size
    (base64 of random bytes: 6 bits a character), so a load of padded events fills a spool
    as fast as its padding says."""
    return base64.b64encode(os.urandom(chars * 3 // 4 + 3)).decode()[:chars]


def envelope(event_id: str, n: int, padding: int = 0) -> bytes:
    """An envelope with an event, a session aggregate and a dropped item type."""
    now = datetime.now(UTC).isoformat()
    event = {
        "event_id": event_id,
        "platform": "python",
        "release": RELEASE,
        "exception": {
            "values": [
                {
                    "type": "KeyError",
                    "value": f"missing key {n}",
                    "stacktrace": {
                        "frames": [
                            {"module": "app.views", "function": f"view_{n % 7}", "lineno": 7},
                        ]
                    },
                }
            ]
        },
        "extra": {"padding": incompressible(padding)} if padding else {},
    }
    sessions = {
        "attrs": {"release": RELEASE, "environment": "production"},
        "aggregates": [{"started": now, "exited": 1}],
    }
    items = [
        (b'{"type":"event"}', orjson.dumps(event)),
        (b'{"type":"sessions"}', orjson.dumps(sessions)),
        (b'{"type":"profile"}', b"{}"),
    ]
    lines = [orjson.dumps({"event_id": event_id, "sent_at": now})]
    for header, payload in items:
        lines += [header, payload]
    return b"\n".join(lines) + b"\n"


@dataclass
class Answer:
    at: float  # monotonic time the answer came
    status: int  # 0: no answer (connection refused or reset)
    event_id: str
    detail: str = ""  # the body of a refusal
    retry_after: str | None = None
    # Monotonic time the request's last byte was written (inf: never all written). Taken
    # before client.post, it ran a few ms ahead of the bytes under load, and a request
    # "sent" 2 ms before SIGTERM could reach the server after its keep-alive connection
    # was closed as idle.
    sent: float = float("inf")


@dataclass
class Load:
    url: str  # the envelope endpoint
    public_key: str
    senders: int = 4
    rate: float = 50.0  # envelopes per second per sender
    max_seconds: float = 300.0  # a hard bound, so a broken test never loads forever
    padding: int = 0  # extra bytes per event (``incompressible``)
    answers: list[Answer] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> Load:
        for n in range(self.senders):
            thread = threading.Thread(target=self._send, args=(n,), daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)

    def __enter__(self) -> Load:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    @property
    def acked(self) -> set[str]:
        with self._lock:
            return {a.event_id for a in self.answers if a.status == 200}

    def statuses(self, since: float = 0.0, until: float = float("inf")) -> Counter[int]:
        with self._lock:
            return Counter(a.status for a in self.answers if since <= a.at <= until)

    def refusals(self, since: float = 0.0) -> list[Answer]:
        with self._lock:
            return [a for a in self.answers if a.status != 200 and a.at >= since]

    def wait_acks(self, more: int, *, timeout: float = 60) -> None:
        """Wait until ``more`` envelopes beyond those acknowledged now are acknowledged."""
        target = len(self.acked) + more
        wait_for(lambda: len(self.acked) >= target, timeout=timeout)

    def _send(self, sender: int) -> None:
        headers = {
            "Content-Type": "application/x-sentry-envelope",
            "X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={self.public_key}",
        }
        interval = 1.0 / self.rate
        deadline = time.monotonic() + self.max_seconds
        n = 0
        with httpx.Client(timeout=30) as client:
            while not self._stop.is_set() and time.monotonic() < deadline:
                started = time.monotonic()
                event_id = uuid.uuid4().hex
                body = envelope(event_id, sender * 1_000_000 + n, self.padding)
                written = _Written()
                try:
                    r = client.post(
                        self.url, content=body, headers=headers, extensions={"trace": written}
                    )
                    answer = Answer(time.monotonic(), r.status_code, event_id, sent=written.at)
                    if r.status_code != 200:
                        answer.detail = r.text[:300]
                        answer.retry_after = r.headers.get("retry-after")
                except httpx.TransportError:
                    answer = Answer(time.monotonic(), 0, event_id, sent=written.at)
                with self._lock:
                    self.answers.append(answer)
                n += 1
                self._stop.wait(max(0.0, interval - (time.monotonic() - started)))


class _Written:
    """An httpcore trace callback: when the request's body was all written to the socket."""

    def __init__(self) -> None:
        self.at = float("inf")

    def __call__(self, event: str, info: object) -> None:
        if event == "http11.send_request_body.complete":
            self.at = time.monotonic()
