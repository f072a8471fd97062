"""How a normalized event is stored: orjson, then zstd. Both directions live here.

A project that has a trained zstd dictionary (``store.dictionaries``) gets its new
events compressed with it: about half the bytes (docs/performance.md). The zstd frame
header names the dictionary (``DICTIONARY_ID_BASE + zstd_dictionaries.id``), so every
stored payload says how to read it and old payloads stay readable after a retraining.
"""

from __future__ import annotations

import struct
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
import zstandard

# With a project's dictionary: level 3, zstd's default. Levels 2 and 1 spend 3 us less
# per 13 KB event (34.5 -> 31.2 us) but store 17% / 27% more payload bytes, past the 2 KB
# per 10 KB event of issue 13 (bench corpus, 2026-11-23; docs/performance.md).
PAYLOAD_ZSTD_LEVEL = 3
# Without one (a project not trained yet): level 1, 10 us less per event (46 -> 36 us)
# for 2.5% more bytes (3,613 -> 3,703 B per event), until its dictionary is trained.
PLAIN_ZSTD_LEVEL = 1
# zstd's format reserves dictionary ids below 32768 for a registry and from 2**31 on.
DICTIONARY_ID_BASE = 32768
MAX_DICTIONARY_ID = 2**31 - 1 - DICTIONARY_ID_BASE
DICTIONARY_MAGIC = b"\x37\xa4\x30\xec"  # zstd dictionary format: magic, then the id
# Compressors kept with their digested dictionary (a ZstdCompressor holds about 4-5x its
# dictionary's size once used); the projects past this are re-created on use.
COMPRESSORS_KEPT = 32

# zstd_dictionaries.id -> a decompressor holding that dictionary (store.dictionaries)
DictionaryLookup = Callable[[int], "zstandard.ZstdDecompressor | None"]


@dataclass(frozen=True)
class Dictionary:
    """A trained dictionary as the encoder uses it."""

    id: int  # zstd_dictionaries.id
    data: bytes  # zstd dictionary format, with ``zstd_id`` in its header

    @property
    def zstd_id(self) -> int:
        return DICTIONARY_ID_BASE + self.id


def compressed(compressor: zstandard.ZstdCompressor, data: bytes) -> bytes:
    """``compressor.compress(data)`` in a bytes object of its own size. zstandard's holds
    an allocation of the worst case's size (``ZSTD_compressBound``: 13.7 KB for 13.6 KB
    that compress to 53 B) for as long as it lives, and the digest holds a transaction's
    payloads until it is written: 13 KB per event instead of 3-4 KB (docs/performance.md,
    "Transactions of several parts")."""
    return bytes(memoryview(compressor.compress(data)))


def with_dictionary_id(data: bytes, dictionary_id: int) -> bytes:
    """``data`` (a zstd dictionary) with its header's id set for ``dictionary_id``."""
    if data[:4] != DICTIONARY_MAGIC or not 0 < dictionary_id <= MAX_DICTIONARY_ID:
        raise ValueError("not a zstd dictionary, or an id out of range")
    return data[:4] + struct.pack("<I", DICTIONARY_ID_BASE + dictionary_id) + data[8:]


class PayloadEncoder:
    """Reuses its compressors (cheaper than a new one per event); not thread-safe."""

    def __init__(self) -> None:
        self._compressor = zstandard.ZstdCompressor(level=PLAIN_ZSTD_LEVEL)
        self._trained: OrderedDict[int, zstandard.ZstdCompressor] = OrderedDict()

    def encode(self, event: dict[str, Any], dictionary: Dictionary | None = None) -> bytes:
        data = orjson.dumps(event)
        if dictionary is None:
            return compressed(self._compressor, data)
        return compressed(self._with(dictionary), data)

    def _with(self, dictionary: Dictionary) -> zstandard.ZstdCompressor:
        compressor = self._trained.get(dictionary.id)
        if compressor is None:
            trained = zstandard.ZstdCompressionDict(dictionary.data)
            compressor = zstandard.ZstdCompressor(level=PAYLOAD_ZSTD_LEVEL, dict_data=trained)
            self._trained[dictionary.id] = compressor
            if len(self._trained) > COMPRESSORS_KEPT:
                self._trained.popitem(last=False)
        else:
            self._trained.move_to_end(dictionary.id)
        return compressor


def dictionary_of(payload: bytes) -> int | None:
    """The ``zstd_dictionaries.id`` a payload was compressed with, or None."""
    zstd_id = zstandard.get_frame_parameters(payload).dict_id
    return zstd_id - DICTIONARY_ID_BASE if zstd_id >= DICTIONARY_ID_BASE else None


def decode(payload: bytes, dictionaries: DictionaryLookup | None = None) -> dict[str, Any]:
    """The normalized event stored by ``PayloadEncoder.encode``. A payload compressed with
    a dictionary needs ``dictionaries`` (``store.dictionaries.lookup(conn)``)."""
    event: dict[str, Any] = orjson.loads(decompress(payload, dictionaries))
    return event


def decompress(payload: bytes, dictionaries: DictionaryLookup | None = None) -> bytes:
    """The event's JSON bytes, as ``decode`` reads them."""
    dictionary_id = dictionary_of(payload)
    if dictionary_id is None:
        return bytes(zstandard.ZstdDecompressor().decompress(payload))
    decompressor = dictionaries(dictionary_id) if dictionaries else None
    if decompressor is None:
        raise ValueError(f"payload needs zstd dictionary {dictionary_id}, which is missing")
    return bytes(decompressor.decompress(payload))


def decompressor(data: bytes) -> zstandard.ZstdDecompressor:
    """A reusable decompressor for payloads made with dictionary ``data``."""
    return zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(data))
