"""The SDK matrix's relay records what it carries and changes nothing (fast, loopback only)."""

from __future__ import annotations

import gzip
import http.client

from tests.sdk.capture_server import CapturedRequest, CaptureServer
from tests.sdk.matrix_results import wire_summary
from tests.sdk.wiretap import RequestParser, Wiretap

ENVELOPE = (
    b'{"event_id":"0123456789abcdef0123456789abcdef"}\n'
    b'{"type":"event"}\n{"event_id":"0123456789abcdef0123456789abcdef"}\n'
    b'{"type":"session"}\n{"sid":"x"}'
)
HEAD = (
    b"POST /api/1/envelope/?sentry_key=k HTTP/1.1\r\nHost: x\r\n"
    b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n"
)


def parse(*pieces: bytes) -> tuple[list[CapturedRequest], RequestParser]:
    seen: list[CapturedRequest] = []
    parser = RequestParser(seen.append)
    for piece in pieces:
        parser.feed(piece)
    return seen, parser


def test_a_request_split_anywhere_is_recorded_once_complete() -> None:
    body = gzip.compress(ENVELOPE)
    wire = HEAD % len(body) + body
    seen, _ = parse(*(wire[i : i + 1] for i in range(len(wire))))
    assert len(seen) == 1
    assert (seen[0].endpoint, seen[0].header("content-encoding"), seen[0].body) == (
        "envelope",
        "gzip",
        body,
    )


def test_chunked_bodies_with_extensions_and_trailers_are_dechunked() -> None:
    wire = (
        b"POST /api/v4/error_tracking/collector/api/7/store/ HTTP/1.1\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
        b"3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: t\r\n\r\n"
    )
    seen, _ = parse(wire[:20], wire[20:])
    assert [(r.endpoint, r.body, r.chunked) for r in seen] == [("store", b"abcde", True)]


def test_pipelined_requests_are_recorded_in_order() -> None:
    first, second = HEAD % 1 + b"a", HEAD % 2 + b"bc"
    seen, _ = parse(first + second)
    assert [r.body for r in seen] == [b"a", b"bc"]


def test_a_stream_that_is_not_http_stops_the_parser_not_the_caller() -> None:
    seen, parser = parse(b"\x16\x03\x01 not http\r\n\r\n", HEAD % 1 + b"a")
    assert seen == [] and parser.broken


def test_the_relay_passes_bytes_and_answers_through_unchanged() -> None:
    body = gzip.compress(ENVELOPE)
    with CaptureServer() as upstream:
        tap = Wiretap(upstream.port)
        try:
            conn = http.client.HTTPConnection("127.0.0.1", tap.port, timeout=10)
            conn.putrequest("POST", "/api/1/envelope/?sentry_key=k&sentry_version=7")
            conn.putheader("Content-Encoding", "gzip")
            conn.putheader("Transfer-Encoding", "chunked")
            conn.endheaders()
            conn.send(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
            response = conn.getresponse()
            answer = response.read()
            conn.close()
            recorded = tap.take()
        finally:
            tap.close()
        received = upstream.requests
    assert (response.status, answer) == (200, b'{"id": "0123456789abcdef0123456789abcdef"}')
    assert [r.body for r in received] == [body] == [r.body for r in recorded]
    assert wire_summary(recorded) == {
        "requests": 1,
        "endpoints": {"event": ["envelope"], "session": ["envelope"]},
        "compression": ["gzip"],
        "auth": ["query string"],
    }
