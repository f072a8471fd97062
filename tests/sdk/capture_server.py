"""Tiny stdlib HTTP server that records what real Sentry SDKs put on the wire.

It listens on 127.0.0.1 (a free port by default) and answers every
``POST .../api/<project>/store/`` and ``POST .../api/<project>/envelope/``
(with or without trailing slash, with any DSN path prefix in front, e.g.
``/api/v4/error_tracking/collector``) with ``200 {"id": "<event id>"}``, the
way Sentry/Relay does.  Every request (method, path + query, headers in wire
order, raw body bytes as received after de-chunking) is recorded untouched.

Used as a library::

    with CaptureServer() as srv:          # or CaptureServer(status=500)
        dsn = srv.dsn()                   # http://<32hex>@127.0.0.1:PORT/42
        ... run an SDK program ...
        for req in srv.requests: ...

or from the command line (prints the DSN, records into a directory)::

    python tests/sdk/capture_server.py --out /tmp/capture [--status 500]

Only the Python standard library is used, so it runs under any venv.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import gzip
import json
import re
import sys
import threading
import time
import uuid
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PUBLIC_KEY = "0123456789abcdef0123456789abcdef"
PROJECT_ID = "42"

_INGEST_RE = re.compile(
    r"^(?P<prefix>/.*?)?/api/(?P<project>[^/]+)/(?P<endpoint>store|envelope)/?$"
)


@dataclass
class CapturedRequest:
    method: str
    path: str  # path + query string exactly as sent
    http_version: str
    headers: list[tuple[str, str]]  # wire order, original case, duplicates kept
    body: bytes  # raw bytes (de-chunked if Transfer-Encoding: chunked)
    received_at: float
    endpoint: str | None  # "store" | "envelope" | None (not an ingest route)
    status: int  # status code we answered
    chunked: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def header(self, name: str) -> str | None:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def decoded_body(self) -> bytes:
        """Body after Content-Encoding (gzip/deflate) is undone; best effort."""
        enc = (self.header("Content-Encoding") or "").strip().lower()
        data = self.body
        if enc in ("gzip", "x-gzip"):
            return gzip.decompress(data)
        if enc == "deflate":
            try:
                return zlib.decompress(data)
            except zlib.error:
                return zlib.decompress(data, -15)
        return data

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "http_version": self.http_version,
            "headers": [[k, v] for k, v in self.headers],
            "body_b64": base64.b64encode(self.body).decode("ascii"),
            "body_len": len(self.body),
            "chunked": self.chunked,
            "endpoint": self.endpoint,
            "response_status": self.status,
        }


def event_id_of(endpoint: str | None, body: bytes) -> str | None:
    """The id Sentry would answer with: envelope header or store body event_id."""
    try:
        if endpoint == "envelope":
            first = body.split(b"\n", 1)[0]
            eid = json.loads(first or b"{}").get("event_id")
        else:
            eid = json.loads(body).get("event_id")
    except (ValueError, AttributeError):
        return None
    return str(eid).replace("-", "") if eid else None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive + automatic "Expect: 100-continue" handling
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            sys.stderr.write("capture_server: " + (format % args) + "\n")

    def _read_body(self) -> tuple[bytes, bool]:
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            out = bytearray()
            while True:
                line = self.rfile.readline(65537)
                size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    # trailers until empty line
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                out += self.rfile.read(size)
                self.rfile.readline(65537)  # CRLF after chunk
            return bytes(out), True
        length = int(self.headers.get("Content-Length") or 0)
        return (self.rfile.read(length) if length else b""), False

    def _answer(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _handle(self) -> None:
        body, chunked = self._read_body()
        path_only = self.path.split("?", 1)[0]
        m = _INGEST_RE.match(path_only)
        endpoint = m.group("endpoint") if m and self.command == "POST" else None
        status = self.server.status if endpoint else 404
        req = CapturedRequest(
            method=self.command,
            path=self.path,
            http_version=self.request_version,
            headers=list(self.headers.raw_items()),
            body=body,
            received_at=time.time(),
            endpoint=endpoint,
            status=status,
            chunked=chunked,
        )
        with self.server.lock:
            self.server.requests.append(req)
            if self.server.out_dir is not None:
                n = len(self.server.requests)
                name = f"{n:02d}-{endpoint or 'other'}.json"
                (self.server.out_dir / name).write_text(json.dumps(req.to_json(), indent=2) + "\n")
        if endpoint is None:
            self._answer(404, {"detail": "not found"})
            return
        if status != 200:
            self._answer(status, {"detail": "capture server configured to fail"})
            return
        try:
            eid = event_id_of(endpoint, req.decoded_body())
        except (OSError, zlib.error, EOFError):
            eid = None
        self._answer(200, {"id": eid} if eid else {})

    do_POST = _handle
    do_PUT = _handle
    do_GET = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr: tuple[str, int], status: int, out_dir: Path | None, verbose: bool):
        super().__init__(addr, _Handler)
        self.status = status
        self.out_dir = out_dir
        self.verbose = verbose
        self.lock = threading.Lock()
        self.requests: list[CapturedRequest] = []


class CaptureServer:
    """Context manager running the capture server in a background thread."""

    def __init__(
        self,
        status: int = 200,
        port: int = 0,
        out_dir: Path | None = None,
        verbose: bool = False,
    ) -> None:
        self._srv = _Server(("127.0.0.1", port), status, out_dir, verbose)
        self._thread = threading.Thread(target=self._srv.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._srv.server_address[1])

    @property
    def requests(self) -> list[CapturedRequest]:
        with self._srv.lock:
            return list(self._srv.requests)

    def dsn(self, key: str = PUBLIC_KEY, project: str = PROJECT_ID, prefix: str = "") -> str:
        return f"http://{key}@127.0.0.1:{self.port}{prefix}/{project}"

    def clear(self) -> None:
        with self._srv.lock:
            self._srv.requests.clear()

    def start(self) -> CaptureServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._srv.shutdown()
        self._srv.server_close()

    def __enter__(self) -> CaptureServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def new_event_id() -> str:
    return uuid.uuid4().hex


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--status", type=int, default=200, help="status answered to ingest requests")
    ap.add_argument("--out", type=Path, help="directory to write NN-<endpoint>.json per request")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
    srv = CaptureServer(status=args.status, port=args.port, out_dir=args.out, verbose=args.verbose)
    print(f"DSN={srv.dsn()}", flush=True)
    print(f"PORT={srv.port}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        srv._srv.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
