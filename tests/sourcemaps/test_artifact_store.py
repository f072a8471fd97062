"""Artifact storage: stored once by checksum, counted per project, removed with the
release or by age, and the upload limits at and past their bound."""

from __future__ import annotations

import pytest

from tests.sourcemaps.bundles import MINIFIED, SOURCE_MAP, app_bundle, make_bundle
from tracebox.models import Project
from tracebox.store import Database, artifacts, projects, releases
from tracebox.store.artifacts import NewFile
from tracebox.store.tables import artifact_blobs
from tracebox.symbolication.bundle import read_bundle
from tracebox.symbolication.uploads import UploadLimits, add_release_file, assemble

LIMITS = UploadLimits(max_upload_bytes=10 * 1024 * 1024, max_project_bytes=10 * 1024 * 1024)


def _project(db: Database, path: str) -> Project:
    with db.write() as conn:
        return projects.create(conn, path, path)


def _blob_count(db: Database) -> int:
    with db.read() as conn:
        return len(conn.execute(artifact_blobs.select()).all())


def _upload(
    db: Database,
    data: bytes,
    projects_: list[Project],
    limits: UploadLimits = LIMITS,
    release: str = "r1",
) -> str:
    """Upload ``data`` as chunks of 1 KiB, then assemble; returns the final state."""
    pieces = [data[i : i + 1024] for i in range(0, len(data), 1024)]
    with db.write() as conn:
        chunks = [artifacts.save_chunk(conn, p, now=1.0) for p in pieces]
    result = assemble(
        db,
        limits,
        projects_,
        checksum=artifacts.sha1(data),
        chunks=chunks,
        release=release,
        dist="",
        now=2.0,
    )
    assert result.state == "ok", result.detail
    return result.state


def test_a_file_in_two_bundles_and_two_projects_is_stored_once(db: Database) -> None:
    web, admin = _project(db, "acme/web"), _project(db, "acme/admin")
    _upload(db, app_bundle(), [web, admin], release="r1")
    _upload(db, app_bundle(prefix="~/assets"), [web], release="r2")  # same bytes, other names
    assert _blob_count(db) == 2  # the minified file and the map, once each
    with db.read() as conn:
        assert artifacts.project_bytes(conn, web.id) == len(MINIFIED) + len(SOURCE_MAP)
        assert artifacts.project_bytes(conn, admin.id) == len(MINIFIED) + len(SOURCE_MAP)
        assert len(artifacts.list_files(conn, web.id, "r1")) == 2
        assert len(artifacts.list_files(conn, web.id, "r2")) == 2
        assert releases.get(conn, web.id, "r1") is not None  # the upload named the release


def test_blobs_go_with_their_last_file(db: Database) -> None:
    web, admin = _project(db, "acme/web"), _project(db, "acme/admin")
    _upload(db, app_bundle(), [web, admin])
    with db.write() as conn:
        assert artifacts.delete_release_artifacts(conn, web.id, "r1") == 2
    assert _blob_count(db) == 2  # admin still names them
    with db.write() as conn:
        assert artifacts.delete_older_than(conn, admin.id, before=1.5) == 0  # uploaded at 2.0
        assert artifacts.delete_older_than(conn, admin.id, before=2.5) == 2
        assert artifacts.project_bytes(conn, admin.id) == 0
    assert _blob_count(db) == 0


def test_the_same_bundle_again_needs_no_chunks(db: Database) -> None:
    web = _project(db, "acme/web")
    data = app_bundle()
    _upload(db, data, [web])
    again = assemble(
        db,
        LIMITS,
        [web],
        checksum=artifacts.sha1(data),
        chunks=["0" * 40],
        release="r1",
        dist="",
        now=3.0,
    )
    assert (again.state, again.missing_chunks) == ("ok", [])


def test_missing_chunks_are_named_then_assembled(db: Database) -> None:
    web = _project(db, "acme/web")
    data = app_bundle()
    chunks = [artifacts.sha1(data)]
    first = assemble(
        db, LIMITS, [web], checksum=chunks[0], chunks=chunks, release="", dist="", now=1.0
    )
    assert (first.state, first.missing_chunks) == ("not_found", chunks)
    with db.write() as conn:
        artifacts.save_chunk(conn, data, now=1.0)
    assert (
        assemble(
            db, LIMITS, [web], checksum=chunks[0], chunks=chunks, release="", dist="", now=2.0
        ).state
        == "ok"
    )
    with db.read() as conn:
        assert artifacts.missing_chunks(conn, chunks) == chunks  # chunks go once assembled
        assert [f.debug_id for f in artifacts.list_files(conn, web.id, "")] == [
            "4415a96a-a91d-5f13-a211-2b949db18bf6"
        ] * 2


def test_upload_size_limit_at_and_past(db: Database) -> None:
    web = _project(db, "acme/web")
    data = app_bundle()
    _upload(
        db,
        data,
        [web],
        UploadLimits(len(data) + len(MINIFIED) + len(SOURCE_MAP), LIMITS.max_project_bytes),
    )
    other = app_bundle(prefix="~/other")
    with db.write() as conn:
        chunk = artifacts.save_chunk(conn, other, now=1.0)
    past = assemble(
        db,
        UploadLimits(len(other) - 1, LIMITS.max_project_bytes),
        [web],
        checksum=chunk,
        chunks=[chunk],
        release="r9",
        dist="",
        now=2.0,
    )
    assert past.state == "error"
    assert f"more than the limit of {len(other) - 1} bytes" in (past.detail or "")


def test_project_storage_limit_at_and_past(db: Database) -> None:
    web = _project(db, "acme/web")
    exact = len(MINIFIED) + len(SOURCE_MAP)
    _upload(db, app_bundle(), [web], UploadLimits(LIMITS.max_upload_bytes, exact))
    # The same files again cost nothing; a new file does not fit.
    _upload(
        db,
        app_bundle(prefix="~/again"),
        [web],
        UploadLimits(LIMITS.max_upload_bytes, exact),
        release="r2",
    )
    new = make_bundle({"~/x.js": ("minified_source", b"var x=1;", {})})
    with db.write() as conn:
        chunk = artifacts.save_chunk(conn, new, now=1.0)
    refused = assemble(
        db,
        UploadLimits(LIMITS.max_upload_bytes, exact),
        [web],
        checksum=chunk,
        chunks=[chunk],
        release="r3",
        dist="",
        now=2.0,
    )
    assert refused.state == "error"
    assert "artifact storage of project acme/web is full" in (refused.detail or "")


def test_bundle_contents_are_bounded(db: Database) -> None:
    data = app_bundle()
    total = len(MINIFIED) + len(SOURCE_MAP)
    assert len(read_bundle(data, max_bytes=total).files) == 2
    from tracebox.errors import PayloadTooLarge

    with pytest.raises(PayloadTooLarge):
        read_bundle(data, max_bytes=total - 1)


def test_unreadable_bundles_are_an_error_not_a_crash(db: Database) -> None:
    web = _project(db, "acme/web")
    for junk in (b"not a zip at all", make_bundle({})[:-10]):
        with db.write() as conn:
            chunk = artifacts.save_chunk(conn, junk, now=1.0)
        result = assemble(
            db, LIMITS, [web], checksum=chunk, chunks=[chunk], release="", dist="", now=2.0
        )
        assert result.state == "error"
        assert "not an artifact bundle" in (result.detail or "")


def test_legacy_release_files(db: Database) -> None:
    web = _project(db, "acme/web")
    stored = add_release_file(
        db,
        LIMITS,
        web,
        release="r1",
        dist="",
        name="~/static/app.min.js",
        data=MINIFIED,
        headers={},
        now=1.0,
    )
    assert stored is not None
    assert (stored.type, stored.sourcemap) == ("minified_source", "app.min.js.map")
    again = add_release_file(
        db,
        LIMITS,
        web,
        release="r1",
        dist="",
        name="~/static/app.min.js",
        data=MINIFIED,
        headers={},
        now=1.0,
    )
    assert again is None  # sentry-cli gets 409
    mapped = add_release_file(
        db,
        LIMITS,
        web,
        release="r1",
        dist="",
        name="~/static/app.min.js.map",
        data=SOURCE_MAP,
        headers={},
        now=1.0,
    )
    assert mapped is not None and mapped.type == "source_map"
    with db.write() as conn:
        assert artifacts.delete_file(conn, web.id, stored.id)
        assert not artifacts.delete_file(conn, web.id, stored.id)
        assert [f.url for f in artifacts.list_files(conn, web.id, "r1")] == [
            "~/static/app.min.js.map"
        ]


def test_new_file_dataclass_round_trip(db: Database) -> None:
    web = _project(db, "acme/web")
    with db.write() as conn:
        artifacts.add_bundle(
            conn,
            web.id,
            checksum="a" * 40,
            bundle_id="",
            release="",
            dist="",
            contents=[NewFile("~/a.js", "source", b"x")],
            now=1.0,
        )
        found = artifacts.by_url(conn, web.id, "", "", ["~/a.js"])
    assert [(f.url, f.size) for f in found] == [("~/a.js", 1)]
