"""Map minified JavaScript frames to their original source, once per event in the digest.

For each frame of a JavaScript event, the artifacts come from the frame's debug ID
(``debug_meta.images`` of type ``sourcemap`` whose ``code_file`` is the frame's file),
else from the event's release and the frame's URL (``urls.candidate_urls``). A mapped
frame gets the original file, line, column, function and source lines, and
``data.symbolicated = true``; the exception keeps its minified frames in
``raw_stacktrace`` ("show raw"). A frame that could not be mapped keeps its minified
location and says why in ``data.symbolication_error`` (a ``Failure``) and
``data.symbolication_detail`` (a sentence for the user).
"""

from __future__ import annotations

import base64
import logging
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from tracebox.symbolication import urls
from tracebox.symbolication.bundle import discover_sourcemap, normalize_debug_id
from tracebox.symbolication.cache import MapCache, ParsedMap, parse
from tracebox.symbolication.frames import apply_token, mark_failed
from tracebox.symbolication.lookup import ArtifactLookup

if TYPE_CHECKING:
    from tracebox.store.artifacts import ArtifactFile

log = logging.getLogger("tracebox.digest")
JAVASCRIPT_PLATFORMS = frozenset({"javascript", "node"})
CONTEXT_LINES = 5  # lines of source before and after the frame's line, as Sentry
_NOT_FILES = frozenset({"<anonymous>", "[native code]", "native", "<unknown>"})


class Failure(StrEnum):
    """Why a frame was not mapped (the UI explains each)."""

    NO_DEBUG_ID = "no_debug_id"  # no debug ID for the file, and the event names no release
    MISSING_ARTIFACT = "missing_artifact"  # nothing uploaded for the release matches the file
    MISSING_SOURCEMAP = "missing_sourcemap"  # the minified file is there, its map is not
    LINE_OUT_OF_RANGE = "line_out_of_range"  # the line/column is not in the uploaded file
    INVALID_SOURCEMAP = "invalid_sourcemap"  # the map could not be parsed


# What the UI calls each failure; the frame's detail sentence says what to fix.
FAILURE_TITLES = {
    Failure.NO_DEBUG_ID: "No debug ID",
    Failure.MISSING_ARTIFACT: "No artifact for this release",
    Failure.MISSING_SOURCEMAP: "Source map missing for this file",
    Failure.LINE_OUT_OF_RANGE: "Line out of range",
    Failure.INVALID_SOURCEMAP: "Unreadable source map",
}


@dataclass(frozen=True)
class Found:
    """The artifacts of one frame: its map, the minified file if uploaded, and how."""

    source_map: ArtifactFile
    minified: ArtifactFile | None
    resolved_with: str  # "debug_id" or "release"
    inline_map: bytes | None = None  # a data: URL map inside the minified file


class Unmapped(Exception):
    def __init__(self, failure: Failure, detail: str) -> None:
        super().__init__(detail)
        self.failure = failure
        self.detail = detail


@dataclass(frozen=True)
class _EventContext:
    project_id: int
    release: str | None
    dist: str
    images: dict[str, str]  # code_file -> debug ID


class Symbolicator:
    def __init__(self, artifacts: ArtifactLookup, cache: MapCache) -> None:
        self.artifacts = artifacts
        self.cache = cache

    def begin_batch(self) -> None:
        """Forget the artifact lookups of the previous batch (parsed maps stay cached)."""
        self.artifacts.begin_batch()

    def symbolicate(self, project_id: int, event: dict[str, Any]) -> None:
        """Map the event's JavaScript frames in place (a no-op for other platforms)."""
        if event.get("platform") not in JAVASCRIPT_PLATFORMS:
            return
        # Only stacks with a frame to map: copying the others' frames (below) would be
        # the whole cost for an event with none (a Node event without columns).
        stacks = [o for o in _stacks(event) if any(map(_candidate, o["stacktrace"]["frames"]))]
        if not stacks:
            return
        ctx = _EventContext(
            project_id=project_id,
            release=_text(event.get("release")),
            dist=_text(event.get("dist")) or "",
            images=_debug_images(event),
        )
        found: dict[str, Found | Unmapped] = {}  # per file: frames of one file share it
        originals = [(owner, [dict(f) for f in owner["stacktrace"]["frames"]]) for owner in stacks]
        try:
            for owner, raw in originals:
                frames = owner["stacktrace"]["frames"]
                mapped = [self._frame(ctx, f, found) for f in frames if _candidate(f)]
                if any(mapped):
                    owner["raw_stacktrace"] = {"frames": raw}
        except Exception:
            # A database error or a bug must not cost the event: it is stored unmapped.
            log.exception("symbolication failed; the event is stored with its minified frames")
            for owner, raw in originals:
                owner["stacktrace"]["frames"] = raw
                owner.pop("raw_stacktrace", None)

    def _frame(
        self, ctx: _EventContext, frame: dict[str, Any], known: dict[str, Found | Unmapped]
    ) -> bool:
        """Map one frame in place; True if it was mapped."""
        path = frame.get("abs_path") or frame["filename"]
        if path not in known:
            try:
                known[path] = self._find(ctx, path)
            except Unmapped as e:
                known[path] = e
        try:
            found = known[path]
            if isinstance(found, Unmapped):
                raise found
            parsed = self._parsed(found)
            token = _lookup(parsed, frame["lineno"], frame["colno"], found)
        except Unmapped as e:
            mark_failed(frame, e.failure.value, e.detail)
            return False
        apply_token(
            frame,
            token,
            map_url=_map_location(path, found),
            resolved_with=found.resolved_with,
            sourcemap=found.source_map.url,
        )
        return True

    # --- finding the artifacts ----------------------------------------------------------

    def _find(self, ctx: _EventContext, path: str) -> Found:
        debug_id = ctx.images.get(path)
        if debug_id is not None:
            try:
                return self._by_debug_id(ctx, debug_id)
            except Unmapped as by_debug_id:
                if ctx.release is None:
                    raise
                try:  # as Sentry: the release's files may still hold the map
                    return self._by_release(ctx, path)
                except Unmapped:
                    raise by_debug_id from None
        if ctx.release is None:
            raise Unmapped(
                Failure.NO_DEBUG_ID,
                f"{_name(path)} has no debug ID and the event names no release: run "
                "`sentry-cli sourcemaps inject` before uploading, or set `release` in the SDK.",
            )
        return self._by_release(ctx, path)

    def _by_debug_id(self, ctx: _EventContext, debug_id: str) -> Found:
        files = self.artifacts.by_debug_id(ctx.project_id, debug_id)
        maps = [f for f in files if f.type == "source_map"]
        minified = next((f for f in files if f.type == "minified_source"), None)
        if not maps:
            what = "Only the minified file" if minified else "Nothing"
            raise Unmapped(
                Failure.MISSING_SOURCEMAP,
                f"{what} with debug ID {debug_id} was uploaded; "
                "upload the source map with `sentry-cli sourcemaps upload`.",
            )
        return Found(maps[0], minified, "debug_id")

    def _by_release(self, ctx: _EventContext, path: str) -> Found:
        assert ctx.release is not None
        release, dist = ctx.release, ctx.dist
        names = urls.candidate_urls(path)
        if not self.artifacts.has_artifacts(ctx.project_id):
            files: list[ArtifactFile] = []
        else:
            files = self.artifacts.by_url(ctx.project_id, release, dist, names)
        minified = next((f for f in files if f.type != "source_map"), None)
        if minified is None:
            uploaded = self.artifacts.release_file_count(ctx.project_id, release, dist)
            in_release = f"release {release}" + (f" (dist {dist})" if dist else "")
            detail = (
                f"{uploaded} files of {in_release} were uploaded, "
                f"none named {' or '.join(names[-2:])}."
                if uploaded
                else f"Nothing was uploaded for {in_release}."
            )
            raise Unmapped(Failure.MISSING_ARTIFACT, detail)
        return self._map_of(ctx, minified)

    def _map_of(self, ctx: _EventContext, minified: ArtifactFile) -> Found:
        reference = minified.sourcemap or discover_sourcemap(self.artifacts.read(minified.checksum))
        if reference is None:
            raise Unmapped(
                Failure.MISSING_SOURCEMAP,
                f"{minified.url} names no source map "
                "(no sourceMappingURL comment and no Sourcemap header).",
            )
        if reference.startswith("data:"):
            inline = _data_url(reference)
            if inline is not None:
                return Found(minified, minified, "release", inline_map=inline)
        map_url = urls.resolve(minified.url, reference)
        assert ctx.release is not None
        maps = self.artifacts.by_url(ctx.project_id, ctx.release, ctx.dist, [map_url])
        if not maps:
            raise Unmapped(
                Failure.MISSING_SOURCEMAP,
                f"{minified.url} names {map_url}, "
                f"which was not uploaded for release {ctx.release}.",
            )
        return Found(maps[0], minified, "release")

    def _parsed(self, found: Found) -> ParsedMap:
        minified = found.minified
        key = (minified.checksum if minified else "", found.source_map.checksum)
        if found.inline_map is not None:
            key = (key[0], "inline")

        def load() -> ParsedMap:
            minified_bytes = self.artifacts.read(minified.checksum) if minified else None
            map_bytes = found.inline_map or self.artifacts.read(found.source_map.checksum)
            if map_bytes is None:
                return ParsedMap(None, None, 0, "the source map was deleted")
            return parse(minified_bytes, map_bytes)

        parsed = self.cache.get(key, load)
        if parsed.error is not None:
            raise Unmapped(Failure.INVALID_SOURCEMAP, f"{found.source_map.url}: {parsed.error}.")
        return parsed


def _lookup(parsed: ParsedMap, line: int, column: int, found: Found) -> Any:
    lengths = parsed.line_lengths
    name = found.minified.url if found.minified else found.source_map.url
    if lengths is not None and (line > len(lengths) or column > lengths[line - 1] + 1):
        width = f"; line {line} has {lengths[line - 1]} columns" if line <= len(lengths) else ""
        raise Unmapped(
            Failure.LINE_OUT_OF_RANGE,
            f"Line {line} column {column} is outside the uploaded {name} "
            f"({len(lengths)} lines{width}): the upload is not the build that ran.",
        )
    assert parsed.lookup is not None
    token = parsed.lookup.lookup(line, column, CONTEXT_LINES)
    if token is None or token.src is None:
        raise Unmapped(
            Failure.LINE_OUT_OF_RANGE,
            f"Line {line} column {column} has no mapping in {found.source_map.url}: "
            "the map does not belong to the build that ran.",
        )
    return token


def _stacks(event: dict[str, Any]) -> list[dict[str, Any]]:
    """The objects holding a stack trace: exceptions, threads, the event itself."""
    owners: list[dict[str, Any]] = []
    for key in ("exception", "threads"):
        container = event.get(key)
        values = container.get("values") if isinstance(container, dict) else None
        owners += [v for v in values or [] if isinstance(v, dict)]
    owners.append(event)
    return [o for o in owners if _has_frames(o)]


def _has_frames(owner: dict[str, Any]) -> bool:
    stack = owner.get("stacktrace")
    return isinstance(stack, dict) and isinstance(stack.get("frames"), list)


def _candidate(frame: Any) -> bool:
    if not isinstance(frame, dict) or frame.get("data", {}).get("symbolicated") is not None:
        return False
    path = frame.get("abs_path") or frame.get("filename")
    return (
        isinstance(path, str)
        and path not in _NOT_FILES
        and isinstance(frame.get("lineno"), int)
        and isinstance(frame.get("colno"), int)
        and frame["lineno"] > 0
        and frame["colno"] > 0
    )


def _debug_images(event: dict[str, Any]) -> dict[str, str]:
    meta = event.get("debug_meta")
    images = meta.get("images") if isinstance(meta, dict) else None
    found: dict[str, str] = {}
    for image in images if isinstance(images, list) else []:
        if not isinstance(image, dict) or image.get("type") != "sourcemap":
            continue
        code_file, debug_id = image.get("code_file"), normalize_debug_id(image.get("debug_id"))
        if isinstance(code_file, str) and debug_id is not None:
            found[code_file] = debug_id
    return found


def _map_location(path: str, found: Found) -> str:
    """Where the frame's map lives, relative to the frame's own URL ``path``."""
    reference = found.minified.sourcemap if found.minified else None
    if found.inline_map is not None or not reference:
        reference = found.source_map.url.rpartition("/")[2]
    return urls.resolve(path, reference)


def _data_url(reference: str) -> bytes | None:
    header, _, payload = reference.partition(",")
    if not header.endswith(";base64"):
        return None
    try:
        return base64.b64decode(payload, validate=False)
    except ValueError:
        return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _name(path: str) -> str:
    return path.partition("?")[0].rpartition("/")[2] or path
