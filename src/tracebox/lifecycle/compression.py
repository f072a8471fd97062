"""Training a zstd dictionary per project from its own events (``store.payloads``).

A project is trained once it stores ``dictionary_min_events`` events, and again every
``RETRAIN_DAYS`` while it keeps receiving events. Every result is stored; the
digest uses the newest one that compressed held-out events of the project enough better
than zstd alone (``store.dictionaries.MIN_GAIN``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import zstandard

from tracebox.config import Settings
from tracebox.store import Database, dictionaries, projects, usage
from tracebox.store.dictionaries import DictionaryInfo
from tracebox.store.payloads import PAYLOAD_ZSTD_LEVEL

log = logging.getLogger("tracebox.lifecycle")

RETRAIN_DAYS = 30
SAMPLE_ERRORS = 300  # the most recently seen errors sampled
SAMPLE_PER_ERROR = 4  # latest events of each
MIN_SAMPLES = 100  # zstd's trainer needs enough samples to find what they share
HOLD_OUT_EVERY = 10  # every 10th sample measures the result instead of training it


@dataclass(frozen=True)
class Trained:
    project_id: int
    dictionary: DictionaryInfo | None  # None: the samples did not compress better


def due(db: Database, settings: Settings, now: float) -> list[int]:
    """Projects that store enough events and have no recent dictionary."""
    found = []
    with db.read() as conn:
        for project in projects.list_all(conn):
            stored = usage.stored(conn, project.id).get(usage.EVENTS)
            if stored is None or stored.items < settings.dictionary_min_events:
                continue
            latest = next(iter(dictionaries.list_for_project(conn, project.id)), None)
            if latest is None or now - latest.created_at > RETRAIN_DAYS * 86400:
                found.append(project.id)
    return found


def train(db: Database, project_id: int, dictionary_bytes: int) -> Trained:
    """Train on the project's recent events and store the result as its next version."""
    with db.read() as conn:
        samples = dictionaries.training_samples(
            conn, project_id, errors_limit=SAMPLE_ERRORS, per_error=SAMPLE_PER_ERROR
        )
    if len(samples) < MIN_SAMPLES:
        return Trained(project_id, None)
    held_out = samples[::HOLD_OUT_EVERY]
    training: list[bytes | bytearray | memoryview] = [
        s for i, s in enumerate(samples) if i % HOLD_OUT_EVERY
    ]
    started = time.monotonic()
    try:
        trained = zstandard.train_dictionary(dictionary_bytes, training, level=PAYLOAD_ZSTD_LEVEL)
    except zstandard.ZstdError as e:  # too little in common, or too few bytes, to train on
        log.info("project %d: no zstd dictionary trained (%s)", project_id, e)
        return Trained(project_id, None)
    plain = _compressed(zstandard.ZstdCompressor(level=PAYLOAD_ZSTD_LEVEL), held_out)
    with_dictionary = _compressed(
        zstandard.ZstdCompressor(level=PAYLOAD_ZSTD_LEVEL, dict_data=trained), held_out
    )
    with db.write() as conn:
        stored = dictionaries.add(
            conn,
            project_id,
            trained.as_bytes(),
            samples=len(training),
            sample_bytes=sum(map(len, training)),
            plain_bytes=plain,
            trained_bytes=with_dictionary,
        )
        info = next(i for i in dictionaries.list_for_project(conn, project_id) if i.id == stored.id)
    log.info(
        "project %d: zstd dictionary v%d trained on %d events in %.1f s: %d -> %d bytes (%s)",
        project_id,
        info.version,
        len(training),
        time.monotonic() - started,
        plain,
        with_dictionary,
        "used" if info.used else "not better: not used",
    )
    return Trained(project_id, info)


def _compressed(compressor: zstandard.ZstdCompressor, samples: list[bytes]) -> int:
    return sum(len(compressor.compress(s)) for s in samples)
