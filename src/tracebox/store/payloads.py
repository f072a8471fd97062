"""How a normalized event is stored: orjson, then zstd. Both directions live here."""

from __future__ import annotations

from typing import Any

import orjson
import zstandard

# Level 3 is zstd's default: most of the ratio of higher levels at a fraction of the CPU.
PAYLOAD_ZSTD_LEVEL = 3


class PayloadEncoder:
    """Reuses one compressor (cheaper than a new one per event); not thread-safe."""

    def __init__(self) -> None:
        self._compressor = zstandard.ZstdCompressor(level=PAYLOAD_ZSTD_LEVEL)

    def encode(self, event: dict[str, Any]) -> bytes:
        return self._compressor.compress(orjson.dumps(event))


def decode(payload: bytes) -> dict[str, Any]:
    """The normalized event stored by ``PayloadEncoder.encode``."""
    data: dict[str, Any] = orjson.loads(zstandard.ZstdDecompressor().decompress(payload))
    return data
