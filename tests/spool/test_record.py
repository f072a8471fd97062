"""The spool record: what ingest writes is what the digest reads, payload bytes untouched."""

from __future__ import annotations

import gzip
import struct
from collections.abc import Callable

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracebox.spool.record import RecordError, RecordKind, SentGzip, SpoolRecord

RECEIVED = 1_700_000_000.25


def test_round_trip_keeps_every_field_and_the_payload_bytes() -> None:
    payload = b'  {"message": "caf\xc3\xa9", "extra": {"n": 1.50}}\n'  # as sent: spaces, 1.50
    record = SpoolRecord(
        kind=RecordKind.EVENT,
        project_id=7,
        key_id=3,
        received=RECEIVED,
        payload=payload,
        client_ip="2001:db8::1",
        event_id="a" * 32,
        headers={"filename": "a.txt"},
    )
    decoded = SpoolRecord.decode(record.encode())
    assert decoded == record
    assert decoded.payload == payload  # never re-serialized


def test_a_record_is_read_from_a_view_and_its_payload_copied_out() -> None:
    """The prepare process reads a batch's records at once and decodes views of them."""
    record = SpoolRecord(RecordKind.EVENT, 7, 3, RECEIVED, b'{"a": 1}', event_id="b" * 32)
    batch = bytearray(b"x" + record.encode() + b"y")
    decoded = SpoolRecord.decode(memoryview(batch)[1:-1])
    batch[:] = b"\0" * len(batch)  # the batch's buffer is reused: the record must not change
    assert decoded == record
    assert type(decoded.payload) is bytes


def test_an_event_is_compressed_in_the_spool_and_read_back_as_sent() -> None:
    payload = orjson.dumps({"message": "x", "frames": [{"lineno": n} for n in range(200)]})
    record = SpoolRecord(RecordKind.EVENT, 7, 3, RECEIVED, payload, event_id="c" * 32)
    data = record.encode()
    length = struct.unpack_from("<BI", data)[1]
    assert orjson.loads(data[5 : 5 + length])["z"] == 1
    assert len(data) < len(payload) / 3
    decoded = SpoolRecord.decode(memoryview(bytearray(data)))
    assert decoded == record
    assert type(decoded.payload) is bytes


def test_the_decoded_size_of_a_record_counts_its_payload_decompressed() -> None:
    payload = b'{"message": "' + b"a" * 5000 + b'"}'
    record = SpoolRecord(RecordKind.EVENT, 7, 3, RECEIVED, payload)
    data = record.encode()
    assert len(data) < 1000
    start = 5 + struct.unpack_from("<BI", data)[1]  # the payload's offset
    assert SpoolRecord.decoded_size(data) == start + len(payload)
    small = SpoolRecord(RecordKind.EVENT, 7, 3, RECEIVED, b"{}").encode()
    assert SpoolRecord.decoded_size(small) == len(small)


@pytest.mark.parametrize("size", [1023, (1 << 20) + 1])
def test_small_and_large_payloads_are_spooled_as_they_are(size: int) -> None:
    """Below 1 KiB there is little to gain; past the largest event (an attachment),
    compressing would hold the web worker's event loop."""
    payload = b"a" * size
    data = SpoolRecord(RecordKind.ATTACHMENT, 7, 3, RECEIVED, payload).encode()
    assert data.endswith(payload)
    assert SpoolRecord.decode(data).payload == payload


def test_a_compressed_payload_that_does_not_decompress_names_its_project() -> None:
    data = bytearray(SpoolRecord(RecordKind.EVENT, 9, 3, RECEIVED, b"{}" + b" " * 2000).encode())
    data[-8:] = b"\xff" * 8  # damaged after the CRC was checked (or written so by a bug)
    with pytest.raises(RecordError, match="does not decompress") as raised:
        SpoolRecord.decode(bytes(data))
    assert raised.value.project_id == 9


def _sent_gzip(item: bytes, before: bytes = b'{"event_id":"c"}\n{"type":"event"}\n') -> SentGzip:
    return SentGzip(gzip.compress(before + item + b"\n"), len(before))


def test_an_event_sent_as_gzip_is_spooled_as_its_body_and_read_back_as_sent() -> None:
    """Nothing is compressed again: the record holds the request body as the SDK sent it,
    and the item's place in it."""
    payload = orjson.dumps({"message": "x", "frames": [{"lineno": n} for n in range(200)]})
    sent = _sent_gzip(payload)
    record = SpoolRecord(RecordKind.EVENT, 7, 3, RECEIVED, payload, event_id="c" * 32, sent=sent)
    data = record.encode()
    length = struct.unpack_from("<BI", data)[1]
    header = orjson.loads(data[5 : 5 + length])
    assert (header["g"], "z" in header) == ([sent.offset, len(payload)], False)
    assert data.endswith(sent.body)
    decoded = SpoolRecord.decode(memoryview(bytearray(data)))
    assert decoded == record
    assert (decoded.payload, decoded.sent, type(decoded.payload)) == (payload, None, bytes)
    assert SpoolRecord.decoded_size(data) == 5 + length + sent.offset + len(payload)


def test_a_sent_body_of_several_gzip_members_is_read_as_ingest_read_it() -> None:
    payload = b'{"message": "' + b"m" * 3000 + b'"}'
    before = b'{"event_id":"c"}\n{"type":"event"}\n'
    whole = before + payload + b"\n"
    body = gzip.compress(whole[:40]) + gzip.compress(whole[40:2000]) + gzip.compress(whole[2000:])
    record = SpoolRecord(
        RecordKind.EVENT, 7, 3, RECEIVED, payload, sent=SentGzip(body, len(before))
    )
    assert SpoolRecord.decode(record.encode()).payload == payload


@pytest.mark.parametrize(
    ("damage", "error"),
    [
        (lambda body: body[: len(body) // 2], "shorter than its item"),  # truncated
        (lambda body: body[:12] + b"\xff" * 40 + body[52:], "does not inflate"),
        (lambda body: gzip.compress(b"{}"), "shorter than its item"),  # another body
    ],
)
def test_a_sent_body_that_does_not_give_its_item_back_names_its_project(
    damage: Callable[[bytes], bytes], error: str
) -> None:
    payload = b'{"message": "' + b"a" * 3000 + b'"}'
    sent = _sent_gzip(payload)
    data = SpoolRecord(RecordKind.EVENT, 9, 3, RECEIVED, payload, sent=sent).encode()
    damaged = data[: -len(sent.body)] + damage(sent.body)
    with pytest.raises(RecordError, match=error) as raised:
        SpoolRecord.decode(damaged)
    assert raised.value.project_id == 9


@pytest.mark.parametrize("span", [[1], [-1, 5], ["1", 5], [True, 5], {"offset": 1}])
def test_a_sent_span_that_is_not_two_counts_is_a_record_error(span: object) -> None:
    header = orjson.dumps({"k": "event", "p": 9, "c": 3, "r": RECEIVED, "g": span})
    data = struct.pack("<BI", 1, len(header)) + header + gzip.compress(b"{}")
    with pytest.raises(RecordError, match="'g' is not") as raised:
        SpoolRecord.decode(data)
    assert raised.value.project_id == 9
    assert SpoolRecord.decoded_size(data) == len(data)


def test_optional_fields_stay_out_of_the_header() -> None:
    record = SpoolRecord(RecordKind.DROPPED, 1, 2, RECEIVED, b'{"transaction":1}')
    encoded = record.encode()
    version, length = struct.unpack_from("<BI", encoded)
    header = orjson.loads(encoded[5 : 5 + length])
    assert (version, header) == (1, {"k": "dropped", "p": 1, "c": 2, "r": RECEIVED})
    assert SpoolRecord.decode(encoded) == record


@given(
    kind=st.sampled_from(list(RecordKind)),
    project_id=st.integers(1, 2**53),
    payload=st.binary(max_size=300) | st.binary(min_size=1024, max_size=3000),
    client_ip=st.none() | st.text(max_size=40),
    event_id=st.none() | st.text("0123456789abcdef", min_size=32, max_size=32),
)
def test_any_record_round_trips(
    kind: RecordKind, project_id: int, payload: bytes, client_ip: str | None, event_id: str | None
) -> None:
    record = SpoolRecord(kind, project_id, 1, RECEIVED, payload, client_ip, event_id)
    assert SpoolRecord.decode(record.encode()) == record


def encoded(header: object, payload: bytes = b"", version: int = 1) -> bytes:
    data = orjson.dumps(header)
    return struct.pack("<BI", version, len(data)) + data + payload


def test_a_kind_this_version_does_not_know_names_its_project() -> None:
    data = encoded({"k": "hologram", "p": 9, "c": 1, "r": RECEIVED}, b"bytes")
    with pytest.raises(RecordError, match="unknown spool record kind") as raised:
        SpoolRecord.decode(data)
    assert raised.value.project_id == 9


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x01\x00",
        encoded({"k": "event", "p": 1, "c": 1, "r": 1}, version=2),  # a future version
        struct.pack("<BI", 1, 5) + b"{nope",
        encoded([]),
        encoded({}),
        encoded({"k": "event", "p": "1", "c": 1, "r": 1}),  # project id as text
        encoded({"k": "event", "p": 1, "c": 1, "r": 1, "ip": 5}),
        encoded({"k": "event", "p": 1, "c": 1, "r": 1, "h": []}),
        b'{"kind": "event"}',  # previous format, incomplete
    ],
)
def test_anything_else_is_a_record_error(data: bytes) -> None:
    with pytest.raises(RecordError):
        SpoolRecord.decode(data)


def test_a_record_of_the_previous_format_is_still_read() -> None:
    """A spool left behind by an upgrade: one JSON object with a normalized payload."""
    event = {"event_id": "b" * 32, "timestamp": RECEIVED, "level": "error", "tags": []}
    legacy = {
        "kind": "event",
        "project_id": 4,
        "key_id": 2,
        "received": RECEIVED,
        "payload": event,
    }
    record = SpoolRecord.decode(orjson.dumps(legacy))
    assert (record.kind, record.project_id, record.key_id) == (RecordKind.EVENT, 4, 2)
    assert record.normalized
    assert orjson.loads(record.payload) == event
