"""Source map artifacts: file contents stored once by SHA-1, indexed by debug ID and by
release + URL; the chunks sentry-cli uploads before it asks for their assembly.

A file row belongs to a project and to a bundle (or to no bundle: a legacy release
file). Its bytes live in ``artifact_blobs`` under their checksum, so the same file in
many bundles, releases or projects is stored once; a blob goes when its last file does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import zstandard
from sqlalchemy import Connection, Row, delete, func, select, update

from tracebox.store.dialect import insert
from tracebox.store.tables import artifact_blobs as blobs
from tracebox.store.tables import artifact_bundles as bundles
from tracebox.store.tables import artifact_chunks as chunks
from tracebox.store.tables import artifact_files as files

BLOB_ZSTD_LEVEL = 3  # zstd's default; source maps shrink about fourfold at this level


@dataclass(frozen=True)
class NewFile:
    """A file about to be stored (from a bundle's manifest or a release file upload)."""

    url: str
    type: str
    data: bytes
    debug_id: str | None = None
    sourcemap: str | None = None


@dataclass(frozen=True)
class ArtifactFile:
    id: int
    project_id: int
    bundle_id: int | None
    release: str  # '' when the file was uploaded without a release
    dist: str
    url: str
    type: str
    debug_id: str | None
    sourcemap: str | None
    checksum: str
    size: int
    created_at: float


def sha1(data: bytes) -> str:
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


# --- chunks ---------------------------------------------------------------------------


def save_chunk(conn: Connection, data: bytes, *, now: float) -> str:
    """Keep one uploaded chunk until it is assembled; returns its checksum."""
    checksum = sha1(data)
    stmt = insert(conn, chunks).values(checksum=checksum, size=len(data), data=data, created_at=now)
    conn.execute(stmt.on_conflict_do_nothing(index_elements=["checksum"]))
    return checksum


def missing_chunks(conn: Connection, checksums: Sequence[str]) -> list[str]:
    """The checksums, in order, of chunks not uploaded yet."""
    found = set(conn.scalars(select(chunks.c.checksum).where(chunks.c.checksum.in_(checksums))))
    return [c for c in checksums if c not in found]


def chunk_sizes(conn: Connection, checksums: Sequence[str]) -> int:
    """Total bytes of the given (distinct, uploaded) chunks."""
    total = conn.scalar(
        select(func.sum(chunks.c.size)).where(chunks.c.checksum.in_(set(checksums)))
    )
    return int(total or 0)


def join_chunks(conn: Connection, checksums: Sequence[str]) -> bytes:
    """The chunks' bytes in the given order (all must have been uploaded)."""
    rows = conn.execute(
        select(chunks.c.checksum, chunks.c.data).where(chunks.c.checksum.in_(set(checksums)))
    )
    data = {row.checksum: bytes(row.data) for row in rows}
    return b"".join(data[c] for c in checksums)


def delete_chunks(conn: Connection, checksums: Iterable[str]) -> None:
    conn.execute(delete(chunks).where(chunks.c.checksum.in_(set(checksums))))


def delete_expired_chunks(conn: Connection, *, before: float) -> int:
    """Chunks uploaded before ``before`` and never assembled (ix_artifact_chunks_created)."""
    return conn.execute(delete(chunks).where(chunks.c.created_at < before)).rowcount or 0


# --- blobs ----------------------------------------------------------------------------


def _put_blob(conn: Connection, data: bytes, *, now: float) -> str:
    checksum = sha1(data)
    exists = conn.scalar(select(blobs.c.size).where(blobs.c.checksum == checksum))
    if exists is None:
        packed = zstandard.ZstdCompressor(level=BLOB_ZSTD_LEVEL).compress(data)
        stmt = insert(conn, blobs).values(
            checksum=checksum, size=len(data), data=packed, created_at=now
        )
        conn.execute(stmt.on_conflict_do_nothing(index_elements=["checksum"]))
    return checksum


def read_blob(conn: Connection, checksum: str) -> bytes | None:
    packed = conn.scalar(select(blobs.c.data).where(blobs.c.checksum == checksum))
    return None if packed is None else zstandard.ZstdDecompressor().decompress(packed)


def new_bytes(conn: Connection, project_id: int, contents: Iterable[bytes]) -> int:
    """How many bytes ``contents`` would add to the project's storage: files whose
    checksum the project already keeps count nothing."""
    by_checksum = {sha1(data): len(data) for data in contents}
    kept = set(
        conn.scalars(
            select(files.c.checksum).where(
                files.c.project_id == project_id, files.c.checksum.in_(by_checksum)
            )
        )
    )
    return sum(size for checksum, size in by_checksum.items() if checksum not in kept)


def project_bytes(conn: Connection, project_id: int) -> int:
    """Artifact bytes the project keeps, each distinct file counted once (uncompressed).
    The storage usage view calls this."""
    used = select(files.c.checksum).where(files.c.project_id == project_id).distinct()
    total = conn.scalar(select(func.sum(blobs.c.size)).where(blobs.c.checksum.in_(used)))
    return int(total or 0)


def _collect_garbage(conn: Connection, checksums: Iterable[str]) -> None:
    """Drop the blobs among ``checksums`` no file names any more (ix_artifact_files_checksum)."""
    candidates = set(checksums)
    if not candidates:
        return
    used = set(conn.scalars(select(files.c.checksum).where(files.c.checksum.in_(candidates))))
    if unused := candidates - used:
        conn.execute(delete(blobs).where(blobs.c.checksum.in_(unused)))


# --- bundles and files ----------------------------------------------------------------


def find_bundle(
    conn: Connection, project_id: int, checksum: str, *, release: str, dist: str
) -> int | None:
    found = conn.scalar(
        select(bundles.c.id).where(
            bundles.c.project_id == project_id,
            bundles.c.checksum == checksum,
            bundles.c.release == release,
            bundles.c.dist == dist,
        )
    )
    return None if found is None else int(found)


def add_bundle(
    conn: Connection,
    project_id: int,
    *,
    checksum: str,
    bundle_id: str,
    release: str,
    dist: str,
    contents: Sequence[NewFile],
    now: float,
) -> int:
    """Store an assembled bundle and index its files; an identical bundle already stored
    for the project (same checksum, release and dist) is returned as is."""
    existing = find_bundle(conn, project_id, checksum, release=release, dist=dist)
    if existing is not None:
        return existing
    row_id = conn.execute(
        bundles.insert().values(
            project_id=project_id,
            checksum=checksum,
            bundle_id=bundle_id,
            release=release,
            dist=dist,
            file_count=len(contents),
            created_at=now,
        )
    ).inserted_primary_key
    assert row_id is not None
    new_id = int(row_id[0])
    for f in contents:
        _add_file(conn, project_id, f, bundle_id=new_id, release=release, dist=dist, now=now)
    return new_id


def add_release_file(
    conn: Connection, project_id: int, f: NewFile, *, release: str, dist: str, now: float
) -> ArtifactFile | None:
    """A legacy release file; None when the release already has a file of that name."""
    taken = conn.scalar(
        select(files.c.id).where(
            files.c.project_id == project_id,
            files.c.release == release,
            files.c.dist == dist,
            files.c.url == f.url,
            files.c.bundle_id.is_(None),
        )
    )
    if taken is not None:
        return None
    file_id = _add_file(conn, project_id, f, bundle_id=None, release=release, dist=dist, now=now)
    return get_file(conn, project_id, file_id)


def _add_file(
    conn: Connection,
    project_id: int,
    f: NewFile,
    *,
    bundle_id: int | None,
    release: str,
    dist: str,
    now: float,
) -> int:
    checksum = _put_blob(conn, f.data, now=now)
    key = conn.execute(
        files.insert().values(
            project_id=project_id,
            bundle_id=bundle_id,
            release=release,
            dist=dist,
            url=f.url,
            type=f.type,
            debug_id=f.debug_id,
            sourcemap=f.sourcemap,
            checksum=checksum,
            size=len(f.data),
            created_at=now,
        )
    ).inserted_primary_key
    assert key is not None
    return int(key[0])


def _file(row: Row[tuple[object, ...]]) -> ArtifactFile:
    m = row._mapping
    return ArtifactFile(
        id=int(m["id"]),
        project_id=int(m["project_id"]),
        bundle_id=None if m["bundle_id"] is None else int(m["bundle_id"]),
        release=str(m["release"]),
        dist=str(m["dist"]),
        url=str(m["url"]),
        type=str(m["type"]),
        debug_id=m["debug_id"],
        sourcemap=m["sourcemap"],
        checksum=str(m["checksum"]),
        size=int(m["size"]),
        created_at=float(m["created_at"]),
    )


def get_file(conn: Connection, project_id: int, file_id: int) -> ArtifactFile | None:
    row = conn.execute(
        select(files).where(files.c.project_id == project_id, files.c.id == file_id)
    ).first()
    return None if row is None else _file(row)


def list_files(
    conn: Connection, project_id: int, release: str, *, after_id: int = 0, limit: int = 100
) -> list[ArtifactFile]:
    """Files of a release (``''``: files uploaded without one), by id (ix_artifact_files_release_url
    narrows to the release; a release holds few enough files to sort them)."""
    rows = conn.execute(
        select(files)
        .where(files.c.project_id == project_id, files.c.release == release, files.c.id > after_id)
        .order_by(files.c.id)
        .limit(limit)
    )
    return [_file(r) for r in rows]


@dataclass(frozen=True)
class ReleaseArtifacts:
    release: str
    files: int
    size: int
    last_upload: float


def release_totals(conn: Connection, project_id: int) -> dict[str, ReleaseArtifacts]:
    """Files, bytes and last upload per release of the project (``''``: no release)."""
    rows = conn.execute(
        select(
            files.c.release,
            func.count().label("n"),
            func.sum(files.c.size).label("size"),
            func.max(files.c.created_at).label("last"),
        )
        .where(files.c.project_id == project_id)
        .group_by(files.c.release)
    )
    return {
        r.release: ReleaseArtifacts(r.release, int(r.n), int(r.size or 0), float(r.last))
        for r in rows
    }


def delete_file(conn: Connection, project_id: int, file_id: int) -> bool:
    found = get_file(conn, project_id, file_id)
    if found is None:
        return False
    conn.execute(delete(files).where(files.c.id == file_id))
    _forget_empty_bundles(conn, project_id)
    _collect_garbage(conn, [found.checksum])
    return True


def delete_release_artifacts(conn: Connection, project_id: int, release: str) -> int:
    """Every file and bundle of a release (``''``: those uploaded without a release)."""
    where = (files.c.project_id == project_id) & (files.c.release == release)
    return _delete_files(conn, project_id, where)


def delete_older_than(conn: Connection, project_id: int, *, before: float) -> int:
    """Retention: the project's artifacts uploaded before ``before``; returns files removed."""
    where = (files.c.project_id == project_id) & (files.c.created_at < before)
    return _delete_files(conn, project_id, where)


def _delete_files(conn: Connection, project_id: int, where: object) -> int:
    checksums = set(conn.scalars(select(files.c.checksum).where(where)))  # type: ignore[arg-type]
    removed = conn.execute(delete(files).where(where)).rowcount or 0  # type: ignore[arg-type]
    _forget_empty_bundles(conn, project_id)
    _collect_garbage(conn, checksums)
    return removed


def _forget_empty_bundles(conn: Connection, project_id: int) -> None:
    with_files = select(files.c.bundle_id).where(
        files.c.project_id == project_id, files.c.bundle_id.is_not(None)
    )
    conn.execute(
        delete(bundles).where(bundles.c.project_id == project_id, bundles.c.id.not_in(with_files))
    )


def rename_release(conn: Connection, project_id: int, old: str, new: str) -> None:
    """Keep a release's artifacts when sentry-cli renames the release."""
    conn.execute(
        update(files)
        .where(files.c.project_id == project_id, files.c.release == old)
        .values(release=new)
    )
    conn.execute(
        update(bundles)
        .where(bundles.c.project_id == project_id, bundles.c.release == old)
        .values(release=new)
    )


# --- lookups for symbolication --------------------------------------------------------


def by_debug_id(conn: Connection, project_id: int, debug_id: str) -> list[ArtifactFile]:
    """Files carrying ``debug_id``, newest first (ix_artifact_files_debug_id)."""
    rows = conn.execute(
        select(files)
        .where(files.c.project_id == project_id, files.c.debug_id == debug_id)
        .order_by(files.c.id.desc())
    )
    return [_file(r) for r in rows]


def by_url(
    conn: Connection, project_id: int, release: str, dist: str, urls: Sequence[str]
) -> list[ArtifactFile]:
    """Files of a release named by one of ``urls``, newest first (ix_artifact_files_release_url)."""
    rows = conn.execute(
        select(files)
        .where(
            files.c.project_id == project_id,
            files.c.release == release,
            files.c.dist == dist,
            files.c.url.in_(urls),
        )
        .order_by(files.c.id.desc())
    )
    return [_file(r) for r in rows]


def release_file_count(conn: Connection, project_id: int, release: str, dist: str) -> int:
    return int(
        conn.scalar(
            select(func.count()).where(
                files.c.project_id == project_id, files.c.release == release, files.c.dist == dist
            )
        )
        or 0
    )


def projects_with_artifacts(conn: Connection, project_ids: Iterable[int]) -> set[int]:
    """Which of the projects keep any artifact: the digest skips lookups for the others."""
    wanted = set(project_ids)
    if not wanted:
        return set()
    found = conn.scalars(
        select(files.c.project_id).where(files.c.project_id.in_(wanted)).distinct()
    )
    return {int(p) for p in found}
