"""Source map symbolication of JavaScript frames (docs/sourcemaps.md).

``Symbolicator.symbolicate(project_id, event)`` runs once per event in the digest,
after scrubbing and before grouping; ``bundle.read_bundle`` reads sentry-cli's uploads.

The names are imported on first use: the digest's prepare process symbolicates without
the store (``lookup.NoArtifacts``), and must not load the database layer for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracebox import lazy

if TYPE_CHECKING:
    from tracebox.symbolication.artifacts import StoreArtifacts
    from tracebox.symbolication.cache import MapCache
    from tracebox.symbolication.lookup import ArtifactLookup, NoArtifacts
    from tracebox.symbolication.symbolicator import FAILURE_TITLES, Failure, Symbolicator

__getattr__ = lazy.exports(
    __name__,
    {
        "ArtifactLookup": "lookup",
        "FAILURE_TITLES": "symbolicator",
        "Failure": "symbolicator",
        "MapCache": "cache",
        "NoArtifacts": "lookup",
        "StoreArtifacts": "artifacts",
        "Symbolicator": "symbolicator",
    },
)

__all__ = [
    "FAILURE_TITLES",
    "ArtifactLookup",
    "Failure",
    "MapCache",
    "NoArtifacts",
    "StoreArtifacts",
    "Symbolicator",
]
