"""Mapping minified frames with uploaded source maps (symbolic), and why not when not.

The fixture (tests/sourcemaps/fixtures) is esbuild's output for the test app's own
modules; its frames are found by debug ID or by release + URL, through the store."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.sourcemaps.bundles import (
    DEBUG_ID,
    MINIFIED,
    SOURCE_MAP,
    app_bundle,
    line_and_column,
    make_bundle,
)
from tracebox.models import Project
from tracebox.store import Database, artifacts, projects
from tracebox.store.artifacts import NewFile
from tracebox.symbolication import MapCache, StoreArtifacts, Symbolicator
from tracebox.symbolication.uploads import UploadLimits, assemble

URL = "http://shop.example/static/app.min.js"
THROW = "throw new TypeError"


def _project(db: Database) -> Project:
    with db.write() as conn:
        return projects.create(conn, "acme/web", "web")


def _upload(db: Database, project: Project, data: bytes, release: str = "") -> None:
    with db.write() as conn:
        chunk = artifacts.save_chunk(conn, data, now=1.0)
    limits = UploadLimits(10**8, 10**9)
    result = assemble(
        db, limits, [project], checksum=chunk, chunks=[chunk], release=release, dist="", now=1.0
    )
    assert result.state == "ok", result.detail


def _event(
    *,
    release: str | None = None,
    debug_id: str | None = None,
    line: int = 0,
    column: int = 0,
    url: str = URL,
) -> dict[str, Any]:
    if not line:
        line, column = line_and_column(THROW)
    total_line, total_column = line_and_column("return i(r)")
    event: dict[str, Any] = {
        "event_id": "a" * 32,
        "platform": "javascript",
        "exception": {
            "values": [
                {
                    "type": "TypeError",
                    "value": "price must be a number, got string",
                    "stacktrace": {
                        "frames": [
                            {
                                "filename": url,
                                "abs_path": url,
                                "function": "o.total",
                                "lineno": total_line,
                                "colno": total_column + 7,
                                "in_app": True,
                            },
                            {
                                "filename": url,
                                "abs_path": url,
                                "function": "i",
                                "lineno": line,
                                "colno": column,
                                "in_app": True,
                            },
                        ]
                    },
                }
            ]
        },
    }
    if release:
        event["release"] = release
    if debug_id:
        event["debug_meta"] = {
            "images": [{"type": "sourcemap", "code_file": url, "debug_id": debug_id}]
        }
    return event


def _frames(event: dict[str, Any]) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = event["exception"]["values"][0]["stacktrace"]["frames"]
    return frames


def _symbolicator(db: Database, cache_bytes: int = 10**8) -> Symbolicator:
    s = Symbolicator(StoreArtifacts(db), MapCache(cache_bytes))
    s.begin_batch()
    return s


def test_frames_map_by_debug_id(db: Database) -> None:
    project = _project(db)
    _upload(db, project, app_bundle())
    event = _event(debug_id=DEBUG_ID.upper())
    raw = copy.deepcopy(_frames(event))
    _symbolicator(db).symbolicate(project.id, event)
    total, thrower = _frames(event)
    assert (thrower["filename"], thrower["lineno"], thrower["function"]) == (
        "src/format.js",
        6,
        "formatPrice",
    )
    assert thrower["context_line"].strip().startswith("throw new TypeError(")
    assert thrower["pre_context"][-1].strip() == 'if (typeof cents !== "number") {'
    assert thrower["abs_path"] == "http://shop.example/src/format.js"
    assert thrower["data"] == {
        "symbolicated": True,
        "resolved_with": "debug_id",
        "sourcemap": "~/static/app.min.js.map",
    }
    assert (total["filename"], total["function"]) == ("src/cart.js", "Cart.total")
    assert event["exception"]["values"][0]["raw_stacktrace"] == {"frames": raw}


def test_frames_map_by_release_and_url_with_a_query_string(db: Database) -> None:
    project = _project(db)
    _upload(db, project, app_bundle(debug_id=None), release="web@1")
    event = _event(release="web@1", url=URL + "?v=3#top")
    _symbolicator(db).symbolicate(project.id, event)
    thrower = _frames(event)[-1]
    assert (thrower["filename"], thrower["lineno"]) == ("src/format.js", 6)
    assert thrower["data"]["resolved_with"] == "release"


def test_a_debug_id_without_its_map_falls_back_to_the_release(db: Database) -> None:
    project = _project(db)
    _upload(db, project, app_bundle(debug_id=None), release="web@1")
    event = _event(release="web@1", debug_id="00000000-0000-0000-0000-000000000001")
    _symbolicator(db).symbolicate(project.id, event)
    assert _frames(event)[-1]["data"]["resolved_with"] == "release"


@pytest.mark.parametrize(
    ("setup", "event_kwargs", "failure", "words"),
    [
        (
            "nothing",
            {"release": "web@9"},
            "missing_artifact",
            "Nothing was uploaded for release web@9",
        ),
        (
            "other-url",
            {"release": "web@1"},
            "missing_artifact",
            "2 files of release web@1 were uploaded, none named",
        ),
        ("nothing", {}, "no_debug_id", "has no debug ID and the event names no release"),
        (
            "minified-only",
            {"release": "web@1"},
            "missing_sourcemap",
            "names ~/static/app.min.js.map, which was not uploaded",
        ),
        (
            "nothing",
            {"debug_id": DEBUG_ID},
            "missing_sourcemap",
            f"Nothing with debug ID {DEBUG_ID} was uploaded",
        ),
        (
            "bundle",
            {"release": "web@1", "line": 9, "column": 1},
            "line_out_of_range",
            "Line 9 column 1 is outside the uploaded ~/static/app.min.js (3 lines)",
        ),
        (
            "bundle",
            {"release": "web@1", "line": 1, "column": 5000},
            "line_out_of_range",
            "line 1 has",
        ),
        ("bad-map", {"release": "web@1"}, "invalid_sourcemap", "the source map cannot be read"),
    ],
)
def test_failures_say_why(
    db: Database, setup: str, event_kwargs: dict[str, Any], failure: str, words: str
) -> None:
    project = _project(db)
    with db.write() as conn:
        files = {
            "nothing": [NewFile("~/unrelated/x.js", "source", b"x")],
            "other-url": [
                NewFile(
                    "~/assets/app.min.js", "minified_source", MINIFIED, sourcemap="app.min.js.map"
                ),
                NewFile("~/assets/app.min.js.map", "source_map", SOURCE_MAP),
            ],
            "minified-only": [
                NewFile(
                    "~/static/app.min.js", "minified_source", MINIFIED, sourcemap="app.min.js.map"
                )
            ],
            "bundle": [
                NewFile(
                    "~/static/app.min.js", "minified_source", MINIFIED, sourcemap="app.min.js.map"
                ),
                NewFile("~/static/app.min.js.map", "source_map", SOURCE_MAP),
            ],
            "bad-map": [
                NewFile(
                    "~/static/app.min.js", "minified_source", MINIFIED, sourcemap="app.min.js.map"
                ),
                NewFile("~/static/app.min.js.map", "source_map", b"{not json"),
            ],
        }[setup]
        release = "" if setup == "nothing" else "web@1"
        artifacts.add_bundle(
            conn,
            project.id,
            checksum="b" * 40,
            bundle_id="",
            release=release,
            dist="",
            contents=files,
            now=1.0,
        )
    event = _event(**event_kwargs)
    _symbolicator(db).symbolicate(project.id, event)
    thrower = _frames(event)[-1]
    assert thrower["data"]["symbolicated"] is False
    assert thrower["data"]["symbolication_error"] == failure
    assert words in thrower["data"]["symbolication_detail"]
    assert thrower["filename"] == event_kwargs.get("url", URL)  # the minified frame stays
    # A frame that was mapped keeps the stack trace's minified twin; none was here.
    mapped = any(f["data"]["symbolicated"] for f in _frames(event))
    assert ("raw_stacktrace" in event["exception"]["values"][0]) == mapped
    assert mapped == (setup == "bundle")  # the other frame is within range


def test_a_map_is_parsed_once_for_many_events(db: Database) -> None:
    project = _project(db)
    _upload(db, project, app_bundle())
    symbolicator = _symbolicator(db)
    for n in range(20):
        if n % 5 == 0:
            symbolicator.begin_batch()
        event = _event(debug_id=DEBUG_ID)
        symbolicator.symbolicate(project.id, event)
        assert _frames(event)[-1]["data"]["symbolicated"] is True
    assert symbolicator.cache.parses == 1


def test_the_cache_stays_within_its_bound(db: Database) -> None:
    project = _project(db)
    _upload(db, project, app_bundle())
    other = MINIFIED + b"// another build\n"  # another checksum: another cache entry
    second = make_bundle(
        {
            "~/v2/app.min.js": ("minified_source", other, {"sourcemap": "app.min.js.map"}),
            "~/v2/app.min.js.map": ("source_map", SOURCE_MAP, {}),
        }
    )
    _upload(db, project, second, release="web@2")
    one_map = len(other) + len(SOURCE_MAP)  # the larger of the two
    symbolicator = _symbolicator(db, cache_bytes=one_map)  # room for one, not both
    for _ in range(3):
        symbolicator.symbolicate(project.id, _event(debug_id=DEBUG_ID))
        symbolicator.symbolicate(
            project.id, _event(release="web@2", url="http://shop.example/v2/app.min.js")
        )
    assert len(symbolicator.cache) == 1 and symbolicator.cache.bytes <= one_map
    assert symbolicator.cache.parses == 6  # each alternation evicts the other
    too_small = _symbolicator(db, cache_bytes=len(MINIFIED) + len(SOURCE_MAP) - 1)
    too_small.symbolicate(project.id, _event(debug_id=DEBUG_ID))
    assert len(too_small.cache) == 0  # a map past the bound is used, not kept


def test_other_platforms_and_mapped_frames_are_left_alone(db: Database) -> None:
    project = _project(db)
    _upload(db, project, app_bundle())
    python = {**_event(debug_id=DEBUG_ID), "platform": "python"}
    before = copy.deepcopy(python)
    symbolicator = _symbolicator(db)
    symbolicator.symbolicate(project.id, python)
    assert python == before
    event = _event(debug_id=DEBUG_ID)
    symbolicator.symbolicate(project.id, event)
    once = copy.deepcopy(event)
    symbolicator.symbolicate(project.id, event)  # a replayed record maps nothing twice
    assert event == once


def test_a_failing_lookup_stores_the_event_unmapped(db: Database) -> None:
    """The artifacts cannot be read (database down, a bug): the event keeps its frames."""
    project = _project(db)
    _upload(db, project, app_bundle())
    symbolicator = _symbolicator(db)

    def broken(_checksum: str) -> bytes | None:
        raise RuntimeError("database is down")

    symbolicator.artifacts.read = broken  # type: ignore[method-assign]
    event = _event(debug_id=DEBUG_ID)
    before = copy.deepcopy(event)
    symbolicator.symbolicate(project.id, event)
    assert event == before
