"""Test helpers: one compressor per content encoding, and streamed compression bombs."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable

import brotli
import zstandard

MIB = 1024 * 1024


def gzip_(data: bytes) -> bytes:
    return _zlib([data], 16 + zlib.MAX_WBITS)


def deflate(data: bytes) -> bytes:
    return zlib.compress(data)


def raw_deflate(data: bytes) -> bytes:
    return _zlib([data], -zlib.MAX_WBITS)


def br(data: bytes) -> bytes:
    return bytes(brotli.compress(data))


def zstd(data: bytes) -> bytes:
    return bytes(zstandard.ZstdCompressor().compress(data))


COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip_,
    "x-gzip": gzip_,
    "deflate": deflate,
    "br": br,
    "zstd": zstd,
}


def _zlib(chunks: Iterable[bytes], wbits: int, level: int = 9) -> bytes:
    compressor = zlib.compressobj(level, zlib.DEFLATED, wbits)
    return b"".join(compressor.compress(chunk) for chunk in chunks) + compressor.flush()


def _zeros(mib: int) -> Iterable[bytes]:
    block = bytes(MIB)
    return (block for _ in range(mib))


def bomb(encoding: str, mib: int) -> bytes:
    """``mib`` MiB of zeros compressed in a stream: the test never holds the plain data."""
    if encoding == "gzip":
        return _zlib(_zeros(mib), 16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return _zlib(_zeros(mib), zlib.MAX_WBITS)
    if encoding == "br":
        compressor = brotli.Compressor(quality=1)
        blocks = b"".join(compressor.process(c) for c in _zeros(mib))
        return blocks + bytes(compressor.finish())
    zstd_compressor = zstandard.ZstdCompressor(level=1).compressobj()
    frames = b"".join(zstd_compressor.compress(c) for c in _zeros(mib))
    return frames + bytes(zstd_compressor.flush())
