import base64
import tracemalloc
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracebox.errors import BadEncoding, InvalidJson, PayloadTooLarge
from tracebox.protocol.decoding import decode_store_body, decompress

from .compression import COMPRESSORS, MIB, bomb, br, deflate, gzip_, raw_deflate, zstd

DATA = b'{"message":"hello world","level":"error"}' * 50


@pytest.mark.parametrize("encoding", [None, "", "  ", "identity", "compress", "snappy"])
def test_no_or_unknown_encoding_is_identity(encoding: str | None) -> None:
    # sentry-ruby 5.9.0 sends "Content-Encoding: " for uncompressed bodies; Relay treats
    # any unknown name as identity.
    assert decompress(DATA, encoding, max_bytes=len(DATA)) == DATA


def test_identity_over_the_limit() -> None:
    with pytest.raises(PayloadTooLarge):
        decompress(DATA, None, max_bytes=len(DATA) - 1)


@pytest.mark.parametrize("encoding", sorted(COMPRESSORS))
def test_each_encoding(encoding: str) -> None:
    assert decompress(COMPRESSORS[encoding](DATA), encoding, max_bytes=len(DATA)) == DATA


@pytest.mark.parametrize("encoding", ["GZIP", " gzip ", "Br", "ZSTD", "Deflate"])
def test_encoding_names_are_case_insensitive(encoding: str) -> None:
    body = COMPRESSORS[encoding.strip().lower()](DATA)
    assert decompress(body, encoding, max_bytes=len(DATA)) == DATA


def test_raw_deflate_fallback() -> None:
    assert decompress(raw_deflate(DATA), "deflate", max_bytes=len(DATA)) == DATA


def test_several_encodings_are_undone_last_first() -> None:
    body = br(gzip_(DATA))  # "gzip, br": gzip applied first
    assert decompress(body, "gzip, br", max_bytes=len(DATA)) == DATA
    assert decompress(body, "gzip,identity, br", max_bytes=len(DATA)) == DATA


def test_concatenated_gzip_members() -> None:
    assert decompress(gzip_(DATA) + gzip_(b"tail"), "gzip", max_bytes=10_000) == DATA + b"tail"


def test_concatenated_zstd_frames() -> None:
    assert decompress(zstd(DATA) + zstd(b"tail"), "zstd", max_bytes=10_000) == DATA + b"tail"


@pytest.mark.parametrize("encoding", sorted(COMPRESSORS))
@pytest.mark.parametrize("cut", [1, 7, 100])
def test_truncated_data_is_bad_encoding(encoding: str, cut: int) -> None:
    body = COMPRESSORS[encoding](DATA + bytes(range(256)) * 4)
    with pytest.raises(BadEncoding, match=r"truncated|not valid"):
        decompress(body[:-cut], encoding, max_bytes=1 * MIB)


@pytest.mark.parametrize("encoding", sorted(COMPRESSORS))
@pytest.mark.parametrize("body", [b"", b"garbage that is not compressed", b"{}"])
def test_garbage_is_bad_encoding(encoding: str, body: bytes) -> None:
    with pytest.raises(BadEncoding, match=f"not valid {encoding}"):
        decompress(body, encoding, max_bytes=1 * MIB)


@pytest.mark.parametrize("encoding", ["gzip", "br", "zstd"])
def test_trailing_garbage_is_bad_encoding(encoding: str) -> None:
    with pytest.raises(BadEncoding):
        decompress(COMPRESSORS[encoding](DATA) + b"junk", encoding, max_bytes=1 * MIB)


def test_zstd_window_beyond_http_limit_is_refused() -> None:
    import zstandard

    params = zstandard.ZstdCompressionParameters(window_log=27)
    compressor = zstandard.ZstdCompressor(compression_params=params).compressobj()
    body = compressor.compress(DATA) + compressor.flush()
    with pytest.raises(BadEncoding):
        decompress(body, "zstd", max_bytes=1 * MIB)


@settings(max_examples=40, deadline=None)
@given(
    data=st.binary(min_size=1, max_size=4096)
    | st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=8), st.integers(1, 20_000))
)
def test_decompress_round_trip_at_and_past_the_limit(data: bytes) -> None:
    for encoding, compress in COMPRESSORS.items():
        body = compress(data)
        assert decompress(body, encoding, max_bytes=len(data)) == data
        with pytest.raises(PayloadTooLarge):
            decompress(body, encoding, max_bytes=len(data) - 1)


@pytest.fixture(
    scope="module", params=[("gzip", 256), ("deflate", 256), ("br", 1024), ("zstd", 1024)]
)
def compression_bomb(request: pytest.FixtureRequest) -> tuple[str, bytes]:
    encoding, mib = request.param
    return encoding, bomb(encoding, mib)


def test_bomb_is_refused_with_flat_memory(compression_bomb: tuple[str, bytes]) -> None:
    encoding, body = compression_bomb
    tracemalloc.start()
    try:
        with pytest.raises(PayloadTooLarge):
            decompress(body, encoding, max_bytes=1 * MIB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * MIB, f"{encoding} bomb used {peak / MIB:.1f} MiB"


def test_bomb_within_a_large_limit_still_stops_at_the_limit() -> None:
    body = bomb("zstd", 256)
    tracemalloc.start()
    try:
        with pytest.raises(PayloadTooLarge):
            decompress(body, "zstd", max_bytes=20 * MIB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * MIB


# --- legacy store bodies ---------------------------------------------------------------

JSON = b'{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","message":"hi"}'


@pytest.mark.parametrize("body", [JSON, b"  \n" + JSON])
def test_store_json_is_used_as_is(body: bytes) -> None:
    assert decode_store_body(body, max_bytes=1000) is body


def test_store_base64_json() -> None:
    assert decode_store_body(base64.b64encode(JSON), max_bytes=1000) == JSON


def test_store_base64_zlib_json() -> None:
    assert decode_store_body(base64.b64encode(zlib.compress(JSON)), max_bytes=1000) == JSON


def test_store_base64_with_line_breaks() -> None:
    assert decode_store_body(base64.encodebytes(zlib.compress(JSON)), max_bytes=1000) == JSON


def test_store_base64_zlib_is_capped() -> None:
    body = base64.b64encode(bomb("deflate", 16))
    with pytest.raises(PayloadTooLarge):
        decode_store_body(body, max_bytes=1 * MIB)


def test_store_body_over_the_limit() -> None:
    with pytest.raises(PayloadTooLarge):
        decode_store_body(JSON, max_bytes=len(JSON) - 1)
    assert decode_store_body(JSON, max_bytes=len(JSON)) == JSON


@pytest.mark.parametrize("body", [b"", b"  ", b"not json", b"[1, 2]", b"@@@@"])
def test_store_neither_json_nor_base64(body: bytes) -> None:
    with pytest.raises(InvalidJson):
        decode_store_body(body, max_bytes=1000)


def test_store_base64_of_garbage() -> None:
    with pytest.raises(BadEncoding, match="base64\\+zlib"):
        decode_store_body(base64.b64encode(b"\x00\x01 not zlib"), max_bytes=1000)


def test_store_php_gzip_body() -> None:
    # sentry-php 3.18.0: Content-Encoding: gzip on a plain JSON store body
    plain = decompress(gzip_(JSON), "gzip", max_bytes=1000)
    assert decode_store_body(plain, max_bytes=1000) == JSON


def test_store_deflate_helper_is_zlib() -> None:
    assert zlib.decompress(deflate(JSON)) == JSON
