"""Trained zstd dictionaries, one version after another per project (``store.payloads``).

A dictionary row is never changed once written, so readers may cache it for as long as
they like; a payload names its dictionary in its zstd frame header.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

import zstandard
from sqlalchemy import Connection, func, select

from tracebox.store import payloads, projects
from tracebox.store.payloads import Dictionary, DictionaryLookup
from tracebox.store.tables import errors, events, zstd_dictionaries

_CACHE_KEY = "tracebox.zstd_decompressors"  # in the DBAPI connection's info dictionary
# A dictionary is used only if it leaves at most this share of plain zstd's bytes on the
# events held out from its training (a project whose events share little gains nothing).
MIN_GAIN = 0.9


@dataclass(frozen=True)
class DictionaryInfo:
    """A dictionary's record, without its bytes (the usage view, the CLI)."""

    id: int
    project_id: int
    version: int
    bytes: int
    samples: int
    sample_bytes: int
    plain_bytes: int  # the held-out samples compressed with zstd alone
    trained_bytes: int  # the same samples with this dictionary
    created_at: float

    @property
    def used(self) -> bool:
        return self.trained_bytes <= self.plain_bytes * MIN_GAIN


def add(
    conn: Connection,
    project_id: int,
    data: bytes,
    *,
    samples: int,
    sample_bytes: int,
    plain_bytes: int,
    trained_bytes: int,
) -> Dictionary:
    """Store ``data`` (a trained zstd dictionary) as the project's next version, with its
    header's id set to the row's (``payloads.with_dictionary_id``)."""
    t = zstd_dictionaries
    latest = conn.execute(
        select(func.max(t.c.version)).where(t.c.project_id == project_id)
    ).scalar()
    row = {
        "project_id": project_id,
        "version": int(latest or 0) + 1,
        "data": data,
        "samples": samples,
        "sample_bytes": sample_bytes,
        "plain_bytes": plain_bytes,
        "trained_bytes": trained_bytes,
        "created_at": time.time(),
    }
    dictionary_id = int(conn.execute(t.insert().values(**row).returning(t.c.id)).scalar_one())
    data = payloads.with_dictionary_id(data, dictionary_id)
    conn.execute(t.update().where(t.c.id == dictionary_id).values(data=data))
    projects.bump_config(conn, project_id)  # every node's digest uses it from its next batch
    return Dictionary(dictionary_id, data)


def current(conn: Connection, project_ids: Iterable[int]) -> dict[int, Dictionary]:
    """The newest useful dictionary (see ``MIN_GAIN``) of each project that has one."""
    ids = list(project_ids)
    if not ids:
        return {}
    t = zstd_dictionaries
    newest = (
        select(t.c.project_id, func.max(t.c.version).label("version"))
        .where(t.c.project_id.in_(ids), t.c.trained_bytes <= t.c.plain_bytes * MIN_GAIN)
        .group_by(t.c.project_id)
        .subquery()
    )
    query = select(t.c.project_id, t.c.id, t.c.data).join(
        newest, (t.c.project_id == newest.c.project_id) & (t.c.version == newest.c.version)
    )
    return {int(p): Dictionary(int(i), bytes(d)) for p, i, d in conn.execute(query)}


def list_for_project(conn: Connection, project_id: int) -> list[DictionaryInfo]:
    t = zstd_dictionaries
    query = (
        select(
            t.c.id,
            t.c.project_id,
            t.c.version,
            func.length(t.c.data).label("bytes"),
            t.c.samples,
            t.c.sample_bytes,
            t.c.plain_bytes,
            t.c.trained_bytes,
            t.c.created_at,
        )
        .where(t.c.project_id == project_id)
        .order_by(t.c.version.desc())
    )
    return [DictionaryInfo(**row._mapping) for row in conn.execute(query)]


def lookup(conn: Connection) -> DictionaryLookup:
    """Decompressors by dictionary id for ``payloads.decode``, loaded once per database
    connection (dictionaries never change, and each database numbers its own)."""
    cache: dict[int, zstandard.ZstdDecompressor] = conn.info.setdefault(_CACHE_KEY, {})

    def find(dictionary_id: int) -> zstandard.ZstdDecompressor | None:
        found = cache.get(dictionary_id)
        if found is None:
            query = select(zstd_dictionaries.c.data).where(zstd_dictionaries.c.id == dictionary_id)
            data = conn.execute(query).scalar()
            if data is None:
                return None
            found = cache[dictionary_id] = payloads.decompressor(bytes(data))
        return found

    return find


def training_samples(
    conn: Connection, project_id: int, *, errors_limit: int, per_error: int
) -> list[bytes]:
    """JSON of the latest ``per_error`` events of the project's most recently seen
    errors: a varied sample, read through indexes (ix_errors_list_last_seen, then
    ix_events_error_time)."""
    recent = (
        select(errors.c.id)
        .where(errors.c.project_id == project_id)
        .order_by(errors.c.last_seen.desc())
        .limit(errors_limit)
    )
    find = lookup(conn)
    found: list[bytes] = []
    for (error_id,) in conn.execute(recent).all():
        query = (
            select(events.c.payload)
            .where(events.c.error_id == error_id)
            .order_by(events.c.timestamp.desc(), events.c.id.desc())
            .limit(per_error)
        )
        found += [payloads.decompress(bytes(p), find) for (p,) in conn.execute(query)]
    return found
