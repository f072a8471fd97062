"""Source map symbolication of JavaScript frames (docs/sourcemaps.md).

``Symbolicator.symbolicate(project_id, event)`` runs once per event in the digest,
after scrubbing and before grouping; ``bundle.read_bundle`` reads sentry-cli's uploads.
"""

from tracebox.symbolication.artifacts import ArtifactLookup, StoreArtifacts
from tracebox.symbolication.cache import MapCache
from tracebox.symbolication.symbolicator import FAILURE_TITLES, Failure, Symbolicator

__all__ = [
    "FAILURE_TITLES",
    "ArtifactLookup",
    "Failure",
    "MapCache",
    "StoreArtifacts",
    "Symbolicator",
]
