"""Where the digest finds artifacts (``lookup.ArtifactLookup``): the store, behind a
per-batch memo.

A batch of events from one build asks for the same few files over and over; each
distinct question reaches the database once per batch. Answers are not kept across
batches, so an upload is seen by the next batch (on any node) without invalidation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from tracebox.store import Database
from tracebox.store import artifacts as store
from tracebox.store.artifacts import ArtifactFile

T = TypeVar("T")


class StoreArtifacts:
    """``ArtifactLookup`` over the database; call ``begin_batch`` before each batch."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._memo: dict[tuple[object, ...], object] = {}

    def begin_batch(self) -> None:
        self._memo.clear()

    def _ask(self, key: tuple[object, ...], query: Callable[[], T]) -> T:
        if key not in self._memo:
            self._memo[key] = query()
        return self._memo[key]  # type: ignore[return-value]

    def has_artifacts(self, project_id: int) -> bool:
        def query() -> bool:
            with self._db.read() as conn:
                return bool(store.projects_with_artifacts(conn, [project_id]))

        return self._ask(("has", project_id), query)

    def by_debug_id(self, project_id: int, debug_id: str) -> list[ArtifactFile]:
        def query() -> list[ArtifactFile]:
            with self._db.read() as conn:
                return store.by_debug_id(conn, project_id, debug_id)

        return self._ask(("debug_id", project_id, debug_id), query)

    def by_url(
        self, project_id: int, release: str, dist: str, urls: Sequence[str]
    ) -> list[ArtifactFile]:
        def query() -> list[ArtifactFile]:
            with self._db.read() as conn:
                return store.by_url(conn, project_id, release, dist, urls)

        return self._ask(("url", project_id, release, dist, tuple(urls)), query)

    def release_file_count(self, project_id: int, release: str, dist: str) -> int:
        def query() -> int:
            with self._db.read() as conn:
                return store.release_file_count(conn, project_id, release, dist)

        return self._ask(("count", project_id, release, dist), query)

    def read(self, checksum: str) -> bytes | None:
        # Not memoized: bytes are read only when the parsed-map cache misses.
        with self._db.read() as conn:
            return store.read_blob(conn, checksum)
