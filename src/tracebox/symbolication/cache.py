"""Parsed source maps, kept in a bounded LRU so a map is parsed once, not per event.

Entries are keyed by the checksums of the minified file and its map: an artifact's
bytes never change under a checksum, so an entry is never stale and several digest
workers never disagree. The bound counts the bytes of both files (a parsed map takes
about 2.5 times that in memory: docs/performance.md).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from symbolic.sourcemapcache import SourceMapCache

CacheKey = tuple[str, str]  # (checksum of the minified file or "", checksum of the map)
ERROR_COST = 1024  # what a remembered parse failure counts against the bound


@dataclass(frozen=True)
class ParsedMap:
    """A usable map, or the reason it is not (``error``)."""

    lookup: SourceMapCache | None
    line_lengths: tuple[int, ...] | None  # of the minified file, when it was uploaded
    cost: int
    error: str | None = None


def parse(minified: bytes | None, source_map: bytes) -> ParsedMap:
    """Build Sentry's lookup structure (symbolic's SourceMapCache) for one map."""
    # symbolic is imported by the first map parsed: ~2 MB that a process which never
    # parses one does not hold (every web worker; the digest until a map is uploaded).
    from symbolic.exceptions import SymbolicError
    from symbolic.sourcemapcache import SourceMapCache

    cost = len(minified or b"") + len(source_map)
    try:
        lookup = SourceMapCache.from_bytes(minified or b"", source_map)
    except SymbolicError as e:
        return ParsedMap(None, None, ERROR_COST, f"the source map cannot be read: {e}")
    lines = None
    if minified is not None:
        lines = tuple(len(line) for line in minified.decode("utf-8", "replace").split("\n"))
    return ParsedMap(lookup, lines, cost)


class MapCache:
    """LRU of ``ParsedMap`` bounded by ``max_bytes`` (one process, one thread)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self.parses = 0  # maps parsed since start: the benchmark checks it stays flat
        self._entries: OrderedDict[CacheKey, ParsedMap] = OrderedDict()

    def get(self, key: CacheKey, load: Callable[[], ParsedMap]) -> ParsedMap:
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
            return found
        parsed = load()
        self.parses += 1
        if parsed.cost <= self.max_bytes:
            self._entries[key] = parsed
            self.bytes += parsed.cost
            while self.bytes > self.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self.bytes -= evicted.cost
        return parsed

    def __len__(self) -> int:
        return len(self._entries)
