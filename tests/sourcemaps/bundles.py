"""Artifact bundles as sentry-cli builds them (a ``SYSB`` header, then a ZIP with
``manifest.json``), and the esbuild fixture files, for the fast tests."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path
from typing import Any

import orjson

FIXTURES = Path(__file__).parent / "fixtures"
MINIFIED = (FIXTURES / "app.min.js").read_bytes()
SOURCE_MAP = (FIXTURES / "app.min.js.map").read_bytes()
DEBUG_ID = "4415a96a-a91d-5f13-a211-2b949db18bf6"


def make_bundle(files: dict[str, tuple[str, bytes, dict[str, str]]], **attributes: Any) -> bytes:
    """``files``: url -> (type, bytes, headers)."""
    out = io.BytesIO()
    out.write(b"SYSB" + struct.pack("<I", 2))
    manifest: dict[str, Any] = {"files": {}, **attributes}
    with zipfile.ZipFile(out, "a", zipfile.ZIP_DEFLATED) as archive:
        for n, (url, (kind, data, headers)) in enumerate(files.items()):
            path = f"files/_/_/{n}-{url.rpartition('/')[2]}"
            archive.writestr(path, data)
            manifest["files"][path] = {"type": kind, "url": url, "headers": headers}
        archive.writestr("manifest.json", orjson.dumps(manifest))
    return out.getvalue()


def app_bundle(*, debug_id: str | None = DEBUG_ID, prefix: str = "~/static") -> bytes:
    """The fixture's minified file and map, as ``sentry-cli sourcemaps upload`` sends them."""
    ids = {"debug-id": debug_id} if debug_id else {}
    return make_bundle(
        {
            f"{prefix}/app.min.js": (
                "minified_source",
                MINIFIED,
                {"sourcemap": "app.min.js.map", **ids},
            ),
            f"{prefix}/app.min.js.map": ("source_map", SOURCE_MAP, dict(ids)),
        },
        debug_id="bebeed47-edc2-5cc9-bc1c-0877b674f797",
        org="acme",
    )


def line_and_column(needle: str) -> tuple[int, int]:
    """1-based line and column of ``needle`` in the minified fixture."""
    text = MINIFIED.decode()
    before = text[: text.index(needle)]
    return before.count("\n") + 1, len(before.rpartition("\n")[2]) + 1
