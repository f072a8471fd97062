import contextlib
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracebox.errors import MalformedEnvelope
from tracebox.protocol.envelope import Envelope, Item, parse_envelope, serialize_envelope

EVENT = b'{"message":"hello world","level":"error"}'


def parse(data: bytes, max_items: int = 100) -> Envelope:
    return parse_envelope(data, max_items=max_items)


def test_develop_docs_example() -> None:
    data = (
        b'{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","dsn":"https://e12d836b15bb49d7bbf99e64295d995b:@sentry.io/42"}\n'
        b'{"type":"attachment","length":10,"content_type":"text/plain","filename":"hello.txt"}\n'
        b"\xef\xbb\xbfHello\r\n\n"
        b'{"type":"event","length":41,"content_type":"application/json","filename":"application.log"}\n'
        + EVENT
        + b"\n"
    )
    envelope = parse(data)
    assert envelope.headers["event_id"] == "9ec79c33ec9942ab8353589fcb2e04dc"
    assert [item.type for item in envelope.items] == ["attachment", "event"]
    assert envelope.items[0].payload == b"\xef\xbb\xbfHello\r\n"  # \r belongs to the payload
    assert envelope.items[0].headers["filename"] == "hello.txt"  # unknown keys kept
    assert envelope.items[1].payload == EVENT


def test_items_without_length_and_without_final_newline() -> None:
    # @sentry/node 7.38.0, sentry-ruby 5.9.0, sentry-php 3.18.0
    data = b'{}\n{"type":"session"}\n{"started":"2020-02-07T14:16:00Z","attrs":{"release":"r@1"}}'
    envelope = parse(data)
    assert envelope.items == [
        Item({"type": "session"}, b'{"started":"2020-02-07T14:16:00Z","attrs":{"release":"r@1"}}')
    ]


def test_item_without_length_keeps_carriage_return() -> None:
    envelope = parse(b'{}\r\n{"type":"event"}\r\n{"a":1}\r\n')
    assert envelope.headers == {}
    assert envelope.items[0].payload == b'{"a":1}\r'


@pytest.mark.parametrize("data", [b"{}", b"{}\n", b'{"event_id":"x"}\n\n', b"{}\n \n\t\r\n"])
def test_envelope_without_items_is_valid(data: bytes) -> None:
    assert parse(data).items == []


def test_empty_attachment() -> None:
    envelope = parse(b'{}\n{"type":"attachment","length":0}\n\n')
    assert envelope.items == [Item({"type": "attachment", "length": 0}, b"")]


def test_length_payload_may_end_at_eof() -> None:
    assert parse(b'{}\n{"type":"event","length":2}\nab').items[0].payload == b"ab"


def test_length_payload_may_contain_newlines() -> None:
    payload = b"line1\nline2\n\n"
    data = b'{}\n{"type":"attachment","length":%d}\n%s\n{"type":"event"}\n{}' % (
        len(payload),
        payload,
    )
    envelope = parse(data)
    assert [i.payload for i in envelope.items] == [payload, b"{}"]


def test_empty_payload_without_length() -> None:
    envelope = parse(b'{}\n{"type":"a"}\n\n{"type":"b"}\nx')
    assert [(i.type, i.payload) for i in envelope.items] == [("a", b""), ("b", b"x")]


def test_blank_lines_before_item_headers_are_skipped() -> None:
    # As Relay, whose JSON reader skips whitespace before an item's headers.
    data = b'{}\n{"type":"a","length":1}\nx\n\n\n  {"type":"b","length":1}\ny\n\n'
    assert [i.payload for i in parse(data).items] == [b"x", b"y"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty envelope"),
        (b" \n\n", "empty envelope"),
        (b"[]\n", "envelope headers are not a JSON object"),
        (b"null", "envelope headers are not a JSON object"),
        (b"{nope\n", "envelope headers are not valid JSON"),
        (b'{"a":1}x\n', "envelope headers are not valid JSON"),
        (b'{}\n{"type":"event"', "item 0 headers are not valid JSON"),
        (b"{}\n[1]\n", "item 0 headers are not a JSON object"),
        (b'{}\n{"length":2}\nab', "item 0 headers: 'type' must be a string"),
        (b'{}\n{"type":5}\nab', "item 0 headers: 'type' must be a string"),
        (b'{}\n{"type":"a","length":-1}\n', "item 0 headers: 'length' must be a non-negative"),
        (b'{}\n{"type":"a","length":"2"}\nab', "'length' must be a non-negative integer"),
        (b'{}\n{"type":"a","length":2.0}\nab', "'length' must be a non-negative integer"),
        (b'{}\n{"type":"a","length":true}\nab', "'length' must be a non-negative integer"),
        (b'{}\n{"type":"a","length":5}\nab', r"item 0: payload truncated \(2 of 5 bytes\)"),
        (b'{}\n{"type":"a","length":5}', r"item 0: payload truncated \(0 of 5 bytes\)"),
        (
            b'{}\n{"type":"a","length":1}\nab\n',
            "item 0: payload of 1 bytes not followed by newline",
        ),
        (b'{}\n{"type":"a"}\nx\n{"type":"b","length":3}\nab', "item 1: payload truncated"),
        (b'{}\n{"type":"a"}\nx\n{"type":"b"} junk\nab', "item 1 headers are not valid JSON"),
    ],
)
def test_malformed(data: bytes, message: str) -> None:
    with pytest.raises(MalformedEnvelope, match=message):
        parse(data)


def test_item_count_at_and_past_the_limit() -> None:
    data = b"{}\n" + b'{"type":"event"}\n{}\n' * 3
    assert len(parse(data, max_items=3).items) == 3
    with pytest.raises(MalformedEnvelope, match="more than 2 items"):
        parse(data, max_items=2)


def test_serialize_writes_lengths() -> None:
    envelope = Envelope({"event_id": "abc"}, [Item({"type": "event"}, b"a\nb")])
    assert (
        serialize_envelope(envelope) == b'{"event_id":"abc"}\n{"type":"event","length":3}\na\nb\n'
    )


# --- properties ------------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
headers = st.dictionaries(st.text(max_size=10), json_values, max_size=4)
item_headers = st.builds(lambda h, t: {**h, "type": t}, headers, st.text(max_size=12))
payloads = st.binary(max_size=200) | st.lists(
    st.sampled_from([b"\n", b"\r", b"\r\n", b"x", b"{}"])
).map(b"".join)
items = st.builds(Item, item_headers, payloads)


@settings(max_examples=100, deadline=None)
@given(headers, st.lists(items, max_size=6))
def test_serialize_parse_round_trip(
    envelope_headers: dict[str, Any], envelope_items: list[Item]
) -> None:
    data = serialize_envelope(Envelope(envelope_headers, envelope_items))
    parsed = parse(data)
    assert parsed.headers == envelope_headers
    assert [i.payload for i in parsed.items] == [i.payload for i in envelope_items]
    # Ingest spools a gzip body with an item's place in it: the place must be exact.
    assert parsed.size == len(data)
    assert [
        data[i.offset : i.offset + len(i.payload)] for i in parsed.items if i.offset is not None
    ] == [i.payload for i in parsed.items]
    assert [i.headers for i in parsed.items] == [
        {**i.headers, "length": len(i.payload)} for i in envelope_items
    ]


line_payloads = st.binary(max_size=100).filter(lambda b: b"\n" not in b)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(item_headers, line_payloads), max_size=6),
    st.booleans(),
)
def test_items_without_length_round_trip(
    pairs: list[tuple[dict[str, Any], bytes]], final_newline: bool
) -> None:

    lines = [b"{}"]
    for item_header, payload in pairs:
        item_header.pop("length", None)
        lines += [orjson.dumps(item_header), payload]
    data = b"\n".join(lines) + (b"\n" if final_newline else b"")
    parsed = parse(data)
    assert [(i.headers, i.payload) for i in parsed.items] == pairs
    assert [
        data[i.offset : i.offset + len(i.payload)] for i in parsed.items if i.offset is not None
    ] == [i.payload for i in parsed.items]


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=300)
    | st.lists(
        st.sampled_from(
            [
                b"{}",
                b"\n",
                b'{"type":"a"}',
                b'{"type":"a","length":3}',
                b"abc",
                b"\r",
                b" ",
                b'"length":',
            ]
        )
    ).map(b"".join)
)
def test_random_bytes_only_ever_raise_malformed(data: bytes) -> None:
    with contextlib.suppress(MalformedEnvelope):
        parse(data, max_items=5)
