"""A byte-for-byte TCP relay that records the HTTP requests it carries.

The SDK matrix puts it between an SDK program and the live server: the DSN names the
relay's port, the relay copies every byte unchanged to the server and back, and a
passive parser reads the client's bytes on the side to record each request (method,
path, headers in wire order, body as sent, de-chunked). So the table can say which
endpoint, compression and authentication the server actually received, without
touching what it receives. Standard library only; one thread pair per connection.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable

from tests.sdk.capture_server import _INGEST_RE, CapturedRequest

CHUNK = 65536


class RequestParser:
    """Incremental HTTP/1.x request parser: feed bytes, get complete requests back."""

    def __init__(self, on_request: Callable[[CapturedRequest], None]) -> None:
        self._buf = bytearray()
        self._on_request = on_request
        self.broken: str | None = None  # set when the stream stops looking like HTTP

    def feed(self, data: bytes) -> None:
        if self.broken:
            return
        self._buf += data
        try:
            while self._parse_one():
                pass
        except ValueError as e:  # never let observation break the relay
            self.broken = str(e)

    def _parse_one(self) -> bool:
        end = self._buf.find(b"\r\n\r\n")
        if end < 0:
            return False
        head = bytes(self._buf[:end]).decode("latin-1").split("\r\n")
        method, target, version = head[0].split(" ", 2)
        if not version.startswith("HTTP/"):
            raise ValueError(f"not an HTTP request line: {head[0][:80]!r}")
        headers = [(k.strip(), v.strip()) for k, v in (line.split(":", 1) for line in head[1:])]
        names = {k.lower(): v for k, v in headers}
        start = end + 4
        chunked = "chunked" in names.get("transfer-encoding", "").lower()
        if chunked:
            parsed = _dechunk(self._buf, start)
            if parsed is None:
                return False
            body, consumed = parsed
        else:
            length = int(names.get("content-length") or 0)
            if len(self._buf) < start + length:
                return False
            body, consumed = bytes(self._buf[start : start + length]), start + length
        del self._buf[:consumed]
        match = _INGEST_RE.match(target.split("?", 1)[0])
        endpoint = match.group("endpoint") if match and method == "POST" else None
        self._on_request(
            CapturedRequest(
                method=method,
                path=target,
                http_version=version,
                headers=headers,
                body=body,
                received_at=time.time(),
                endpoint=endpoint,
                status=0,  # the relay does not parse responses
                chunked=chunked,
            )
        )
        return True


def _dechunk(buf: bytearray, pos: int) -> tuple[bytes, int] | None:
    """(body, bytes consumed) of a complete chunked body starting at ``pos``, else None."""
    out = bytearray()
    while True:
        eol = buf.find(b"\r\n", pos)
        if eol < 0:
            return None
        size = int(bytes(buf[pos:eol]).split(b";", 1)[0].strip() or b"0", 16)
        pos = eol + 2
        if size == 0:
            while True:  # trailers, up to an empty line
                eol = buf.find(b"\r\n", pos)
                if eol < 0:
                    return None
                line, pos = buf[pos:eol], eol + 2
                if not line:
                    return bytes(out), pos
        if len(buf) < pos + size + 2:
            return None
        out += buf[pos : pos + size]
        pos += size + 2


class Wiretap:
    """Listen on a free loopback port and relay every connection to ``upstream_port``."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream = ("127.0.0.1", upstream_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._lock = threading.Lock()
        self._requests: list[CapturedRequest] = []
        self._closed = threading.Event()
        threading.Thread(target=self._accept_loop, name="wiretap", daemon=True).start()

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    def take(self) -> list[CapturedRequest]:
        """The requests recorded since the last call, in arrival order."""
        with self._lock:
            taken, self._requests = self._requests, []
        return taken

    def close(self) -> None:
        self._closed.set()
        self._listener.close()

    def _record(self, request: CapturedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _accept_loop(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            tap = RequestParser(self._record).feed
            threading.Thread(target=_relay, args=(client, server, tap), daemon=True).start()


def _relay(client: socket.socket, server: socket.socket, tap: Callable[[bytes], None]) -> None:
    back = threading.Thread(target=_pump, args=(server, client, None), daemon=True)
    back.start()
    _pump(client, server, tap)
    back.join()
    client.close()
    server.close()


def _pump(src: socket.socket, dst: socket.socket, tap: Callable[[bytes], None] | None) -> None:
    """Copy ``src`` to ``dst`` until EOF; the request side is observed *before* it is sent,
    so a request is recorded by the time its response can reach the SDK."""
    try:
        while data := src.recv(CHUNK):
            if tap is not None:
                tap(data)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)
        with contextlib.suppress(OSError):
            src.shutdown(socket.SHUT_RD)
