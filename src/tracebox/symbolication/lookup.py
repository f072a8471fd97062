"""Where the symbolicator asks for artifacts (``ArtifactLookup``), and the answers for a
project that keeps none (``NoArtifacts``).

The digest's prepare process reads no database: the digest hands it only the events of
projects without artifacts, and it symbolicates them with ``NoArtifacts``. Their frames
are then explained as unmapped exactly as the store's lookup would explain them ("no
debug ID", "nothing was uploaded for this release"), whichever process prepared them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tracebox.store.artifacts import ArtifactFile


class ArtifactLookup(Protocol):
    def begin_batch(self) -> None: ...
    def has_artifacts(self, project_id: int) -> bool: ...
    def by_debug_id(self, project_id: int, debug_id: str) -> list[ArtifactFile]: ...
    def by_url(
        self, project_id: int, release: str, dist: str, urls: Sequence[str]
    ) -> list[ArtifactFile]: ...
    def release_file_count(self, project_id: int, release: str, dist: str) -> int: ...
    def read(self, checksum: str) -> bytes | None: ...


class NoArtifacts:
    """``ArtifactLookup`` of projects that keep no artifact."""

    def begin_batch(self) -> None:
        pass

    def has_artifacts(self, project_id: int) -> bool:
        return False

    def by_debug_id(self, project_id: int, debug_id: str) -> list[ArtifactFile]:
        return []

    def by_url(
        self, project_id: int, release: str, dist: str, urls: Sequence[str]
    ) -> list[ArtifactFile]:
        return []

    def release_file_count(self, project_id: int, release: str, dist: str) -> int:
        return 0

    def read(self, checksum: str) -> bytes | None:
        return None
