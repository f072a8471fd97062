"""Reading sentry-cli's artifact bundles (pure: bytes in, files out).

A bundle is Sentry's "source bundle": an 8-byte header (``SYSB`` and a version) before a
ZIP archive holding ``manifest.json`` and the files. The manifest maps each archive path
to ``{"type", "url", "headers"}`` (headers ``debug-id`` and ``sourcemap``, lowercase) and
carries attributes such as ``debug_id``, ``org``, ``project``, ``release`` and ``dist``.
Everything is bounded: the archive may not expand past ``max_bytes``.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass, field
from typing import Any

import orjson

from tracebox.errors import BadRequest, PayloadTooLarge

MANIFEST = "manifest.json"
MAX_FILES = 20_000  # as sentry-cli's cap on files per release upload
MAX_URL_CHARS = 1000  # artifact_files.url
FILE_TYPES = frozenset({"source", "minified_source", "source_map", "indexed_ram_bundle"})
_UUID = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}")
# sentry-cli's inject appends `//# debugId=<uuid>` to a minified file.
_DEBUG_ID_COMMENT = re.compile(rb"//# debugId=([0-9a-fA-F-]{32,36})")


class BadBundle(BadRequest):
    """The uploaded bytes are not a readable artifact bundle."""


@dataclass(frozen=True)
class BundleFile:
    url: str
    type: str
    data: bytes
    debug_id: str | None
    sourcemap: str | None


@dataclass(frozen=True)
class Bundle:
    attributes: dict[str, str]
    files: list[BundleFile] = field(default_factory=list)

    @property
    def bundle_id(self) -> str:
        return normalize_debug_id(self.attributes.get("debug_id")) or ""


def normalize_debug_id(value: Any) -> str | None:
    """A debug ID as lowercase ``8-4-4-4-12`` hex (an appendix such as ``-1a`` is dropped:
    JavaScript debug IDs are plain UUIDs); None when ``value`` is not one."""
    if not isinstance(value, str):
        return None
    found = _UUID.match(value.strip().lower())
    if found is None:
        return None
    h = found.group(0).replace("-", "")
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def read_bundle(data: bytes, *, max_bytes: int) -> Bundle:
    """The manifest and files of a bundle; ``BadBundle`` (400) when it cannot be read,
    ``PayloadTooLarge`` (413) when its files add up past ``max_bytes``."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        manifest = orjson.loads(_read(archive, MANIFEST, max_bytes))
    except (zipfile.BadZipFile, KeyError, orjson.JSONDecodeError, OSError) as e:
        raise BadBundle(f"the upload is not an artifact bundle: {e}") from e
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files", {}), dict):
        raise BadBundle("the bundle's manifest.json is not an object with files")
    entries: dict[str, Any] = manifest.get("files", {})
    if len(entries) > MAX_FILES:
        raise PayloadTooLarge(f"the bundle holds {len(entries)} files, at most {MAX_FILES}")
    attributes = {k: v for k, v in manifest.items() if isinstance(v, str)}
    budget = max_bytes
    files = []
    for path, info in entries.items():
        found = _file(archive, path, info if isinstance(info, dict) else {}, budget)
        if found is not None:
            budget -= len(found.data)
            files.append(found)
    return Bundle(attributes, files)


def _read(archive: zipfile.ZipFile, name: str, limit: int) -> bytes:
    """A member's bytes, never more than ``limit`` whatever its header claims."""
    with archive.open(name) as member:
        data = member.read(limit + 1)
    if len(data) > limit:
        raise PayloadTooLarge(f"the bundle's files exceed {limit} bytes uncompressed")
    return data


def _file(
    archive: zipfile.ZipFile, path: str, info: dict[str, Any], budget: int
) -> BundleFile | None:
    url, kind = info.get("url"), info.get("type")
    if not isinstance(url, str) or not url or len(url) > MAX_URL_CHARS:
        return None  # a file without a usable URL cannot be looked up
    names = set(archive.namelist())
    member = path if path in names else f"files/{path}"
    if member not in names:
        raise BadBundle(f"the bundle's manifest names {path!r}, which it does not hold")
    try:
        data = _read(archive, member, budget)
    except (zipfile.BadZipFile, OSError) as e:
        raise BadBundle(f"the bundle's file {path!r} cannot be read: {e}") from e
    headers = {
        str(k).lower(): v for k, v in (info.get("headers") or {}).items() if isinstance(v, str)
    }
    kind = kind if kind in FILE_TYPES else "source"
    sourcemap = headers.get("sourcemap") or headers.get("x-sourcemap")
    if sourcemap is None and kind == "minified_source":
        sourcemap = discover_sourcemap(data)
    if sourcemap is not None and len(sourcemap) > MAX_URL_CHARS:
        sourcemap = None  # an inline data: map; the digest reads it from the file itself
    debug_id = normalize_debug_id(headers.get("debug-id")) or discover_debug_id(kind, data)
    return BundleFile(url, kind, data, debug_id, sourcemap)


def discover_debug_id(kind: str, data: bytes) -> str | None:
    """The debug ID written into a file by ``sentry-cli sourcemaps inject``: a
    ``//# debugId=`` comment at the end of a minified file, ``debug_id`` in a map."""
    if kind == "minified_source":
        found = _DEBUG_ID_COMMENT.search(data[-4096:])
        return normalize_debug_id(found.group(1).decode()) if found else None
    if kind == "source_map":
        try:
            parsed = orjson.loads(data)
        except orjson.JSONDecodeError:
            return None
        if isinstance(parsed, dict):
            return normalize_debug_id(parsed.get("debug_id") or parsed.get("debugId"))
    return None


def discover_sourcemap(data: bytes | None) -> str | None:
    """The ``//# sourceMappingURL=`` of a minified file (the last one wins, as browsers)."""
    if data is None:
        return None
    for marker in (b"//# sourceMappingURL=", b"//@ sourceMappingURL="):
        at = data.rfind(marker)
        if at >= 0:
            value = data[at + len(marker) :].split(b"\n", 1)[0].strip()
            return value.decode("utf-8", "replace") or None
    return None
