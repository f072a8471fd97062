"""Request bodies: content encodings and the legacy store encodings, always under a cap.

Every decoder streams: it yields bounded chunks and ``_collect`` stops as soon as the
output passes ``max_bytes``, so a compression bomb is never inflated (Relay's ``Decoder``
sink does the same). Memory stays within ``max_bytes`` plus one chunk.

gzip and deflate are inflated by zlib-ng (the ``zlib`` API, same streams and errors),
1.7x faster than the stdlib's zlib 1.2.13 on SDK envelopes: every event is inflated once
in the web worker (issue 10).
"""

from __future__ import annotations

import binascii
from collections.abc import Callable, Iterator

import brotli
import zstandard
from zlib_ng import zlib_ng

from tracebox.errors import BadEncoding, InvalidJson, PayloadTooLarge

_IN_CHUNK = 64 * 1024  # compressed bytes fed per step: bounds copies of the pending input
_OUT_CHUNK = 256 * 1024  # decompressed bytes produced per step

# Largest zstd expansion of one input byte: an RLE block turns 4 bytes into 128 KiB.
_ZSTD_MAX_RATIO = 32 * 1024
_ZSTD_MIN_STEP = 64
# Window a zstd frame may ask for: 8 MiB, the limit RFC 9659 sets for HTTP content coding.
_ZSTD_MAX_WINDOW = 8 * 1024 * 1024

_GZIP_WBITS = 16 + zlib_ng.MAX_WBITS
# zlib-ng's stub declares its error class as an instance (``error: Exception``).
_INFLATE_ERROR: type[Exception] = zlib_ng.error  # type: ignore[assignment]
_DECODE_ERRORS = (_INFLATE_ERROR, brotli.error, zstandard.ZstdError)


def decompress(body: bytes, content_encoding: str | None, *, max_bytes: int) -> bytes:
    """Undo ``Content-Encoding`` (gzip, x-gzip, deflate, br, zstd; several are undone last
    first). Empty, ``identity`` and unknown names mean no encoding, as Relay (sentry-ruby
    sends an empty header). Raises ``PayloadTooLarge`` when the result would exceed
    ``max_bytes`` and ``BadEncoding`` when the data does not decode."""
    for name in reversed((content_encoding or "").split(",")):
        decoder = _DECODERS.get(name.strip().lower())
        if decoder is not None:
            body = _collect(decoder(body, max_bytes), max_bytes, name.strip())
    if len(body) > max_bytes:
        raise PayloadTooLarge(f"body exceeds {max_bytes} bytes")
    return body


def is_gzip(content_encoding: str | None) -> bool:
    """Whether a body with this ``Content-Encoding`` is gzip and nothing else."""
    return content_encoding is not None and content_encoding.strip().lower() in _GZIP_NAMES


def gunzip_prefix(body: bytes | memoryview, size: int) -> bytes:
    """The first ``size`` bytes of a gzip body's inflation, members read in turn as
    ``decompress`` reads them: how the digest reads an item back from the request body
    ingest spooled as sent (``spool.record``). A body of one member (what SDKs send) is
    inflated no further than ``size``, one of several by ``_inflate``'s steps. Shorter
    when the body holds fewer; ``BadEncoding`` when it is not gzip, or a member after
    the first is cut short."""
    try:
        decoder = zlib_ng.decompressobj(_GZIP_WBITS)
        out = decoder.decompress(body, size)
        if len(out) == size or not decoder.eof or not decoder.unused_data:
            return out
        whole = bytearray()  # a body of several members (SDKs send one): read them in turn
        for chunk in _inflate(bytes(body), _GZIP_WBITS):
            whole += chunk
            if len(whole) >= size:
                break
    except _INFLATE_ERROR as e:
        raise BadEncoding(f"body is not valid gzip data: {e}") from e
    return bytes(whole[:size])


def decode_store_body(body: bytes, *, max_bytes: int) -> bytes:
    """The JSON of a store request, as Relay's legacy rule: a body starting with ``{`` is
    used as is; otherwise it is base64, and the decoded bytes are used if they start with
    ``{``, else zlib-inflated under ``max_bytes``. Raises ``PayloadTooLarge``,
    ``InvalidJson`` (neither JSON nor base64) or ``BadEncoding`` (base64 of bad zlib)."""
    if len(body) > max_bytes:
        raise PayloadTooLarge(f"store body exceeds {max_bytes} bytes")
    if body.lstrip()[:1] == b"{":
        return body
    if not body.strip():
        raise InvalidJson("empty store body")
    try:
        decoded = binascii.a2b_base64(body, strict_mode=False)
    except binascii.Error as e:
        raise InvalidJson("store body is neither a JSON object nor base64") from e
    if not decoded:
        raise InvalidJson("store body is neither a JSON object nor base64")
    if decoded.lstrip()[:1] == b"{":
        return decoded
    # zlib as the old SDKs send it; MAX_WBITS | 32 also takes a gzip header.
    return _collect(_inflate(decoded, zlib_ng.MAX_WBITS | 32), max_bytes, "base64+zlib")


def _collect(chunks: Iterator[bytes], max_bytes: int, encoding: str) -> bytes:
    out = bytearray()
    try:
        for chunk in chunks:
            out += chunk
            if len(out) > max_bytes:
                raise PayloadTooLarge(f"decompressed body exceeds {max_bytes} bytes")
    except _DECODE_ERRORS as e:
        raise BadEncoding(f"body is not valid {encoding} data: {e}") from e
    return bytes(out)


def _inflate(body: bytes, wbits: int) -> Iterator[bytes]:
    """zlib-family streams; concatenated streams are decoded in turn (as gzip(1) does for
    gzip members). ``max_length`` bounds each step's output."""
    decoder = zlib_ng.decompressobj(wbits)
    pos, pending = 0, b""
    while pending or pos < len(body):
        if not pending:
            pending, pos = body[pos : pos + _IN_CHUNK], pos + _IN_CHUNK
        yield decoder.decompress(pending, _OUT_CHUNK)
        pending = decoder.unconsumed_tail
        if decoder.eof:
            pending = decoder.unused_data
            if not pending and pos >= len(body):
                return
            decoder = zlib_ng.decompressobj(wbits)
    while not decoder.eof:  # input is used up: drain what zlib still holds, if anything
        out = decoder.decompress(b"", _OUT_CHUNK)
        if not out:
            raise _INFLATE_ERROR("compressed data is truncated")
        yield out


def _gzip(body: bytes, max_bytes: int) -> Iterator[bytes]:
    return _inflate(body, _GZIP_WBITS)


def _deflate(body: bytes, max_bytes: int) -> Iterator[bytes]:
    # HTTP "deflate" is zlib-wrapped (RFC 9110), but some clients send raw deflate; the
    # zlib header is checked (method 8, window <= 32K, FCHECK) to pick, as browsers do.
    zlib_wrapped = (
        len(body) >= 2
        and body[0] & 0x0F == 8
        and body[0] >> 4 <= 7
        and (body[0] << 8 | body[1]) % 31 == 0
    )
    return _inflate(body, zlib_ng.MAX_WBITS if zlib_wrapped else -zlib_ng.MAX_WBITS)


def _brotli(body: bytes, max_bytes: int) -> Iterator[bytes]:
    # Brotli >= 1.2: output_buffer_limit bounds one step; while the decoder cannot take
    # input it must be called with empty input to drain.
    decoder = brotli.Decompressor()
    for start in range(0, len(body), _IN_CHUNK):
        yield decoder.process(body[start : start + _IN_CHUNK], output_buffer_limit=_OUT_CHUNK)
        while not decoder.can_accept_more_data():
            yield decoder.process(b"", output_buffer_limit=_OUT_CHUNK)
    while not decoder.is_finished():
        out = decoder.process(b"", output_buffer_limit=_OUT_CHUNK)
        if not out:
            raise brotli.error("compressed data is truncated")
        yield out


def _zstd(body: bytes, max_bytes: int) -> Iterator[bytes]:
    """zstd frames in turn. The decompressobj has no output limit but tells where a frame
    ends (the stream reader silently stops on truncated input), so the input is fed in
    steps small enough that even the densest frame cannot expand a step past the budget."""
    decoder, produced, pos = _zstd_decoder(), 0, 0
    while pos < len(body):
        step = max(_ZSTD_MIN_STEP, min(_IN_CHUNK, (max_bytes - produced) // _ZSTD_MAX_RATIO))
        out = decoder.decompress(body[pos : pos + step])
        pos += step
        produced += len(out)
        yield out
        if decoder.eof:
            pos -= len(decoder.unused_data)  # the next frame starts there
            decoder = _zstd_decoder()
            if pos >= len(body):
                return
    raise zstandard.ZstdError("compressed data is truncated")


def _zstd_decoder() -> zstandard.ZstdDecompressionObj:
    return zstandard.ZstdDecompressor(max_window_size=_ZSTD_MAX_WINDOW).decompressobj()


_GZIP_NAMES = frozenset({"gzip", "x-gzip"})
_DECODERS: dict[str, Callable[[bytes, int], Iterator[bytes]]] = {
    "gzip": _gzip,
    "x-gzip": _gzip,
    "deflate": _deflate,
    "br": _brotli,
    "zstd": _zstd,
}
