"""The digest's per-event outputs are pinned: normalized event (byte for byte, key order
included, as it is stored), grouping (a changed hash would split existing errors),
summary (title, culprit...) and tags, for every real SDK event of ``tests/samples`` and
for seeded mutations of them that put odd types everywhere (the slow paths next to the
fast ones of ``protocol.interfaces``, ``_coerce``, ``levels``, ``grouping``, ``tags``).

``pinned_outputs.json`` was written by the code before the fast paths were added. A change
that means to change these outputs regenerates it (and bumps ``GROUPING_VERSION`` when a
hash changes): ``.venv/bin/python -m tests.protocol.test_pinned_outputs``.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from tracebox import grouping
from tracebox.grouping.inapp import mark_sdk_frames
from tracebox.protocol import event as event_module
from tracebox.protocol.event import normalize_event, summarize
from tracebox.protocol.tags import event_tags

from . import real_samples
from .real_samples import programs, scenarios

PINNED = Path(__file__).with_name("pinned_outputs.json")
MUTANTS_PER_EVENT = 20
RECEIVED = 1_900_000_000.0
# Values of the wrong type, empty, odd or out of range, for any field.
ODD: tuple[Any, ...] = (
    None, 0, -1, 7, 3.5, True, False, "", " ", "x", "ERROR", " Warn ", "40", [], {},
    [1, "a"], {"a": 1}, {"values": []}, [[1, 2]], ["k", "v"], "2024-01-01T00:00:00",
    1e300, "nul\x00", "http://a.b/c?d#e", {"values": [{"x": 1}]}, [None],
    {"synthetic": True}, {"handled": True, "type": "t"},
)  # fmt: skip
KEYS = (
    "lineno", "in_app", "vars", "function", "raw_function", "module", "type", "value",
    "mechanism", "data", "timestamp", "level", "instruction_addr", "pre_context", "id",
    "handled", "synthetic", "frames", "values", "url", "context_line", "platform",
)  # fmt: skip


def raw_events() -> dict[str, dict[str, Any]]:
    """Each SDK sample event as sent, then its mutants, by name."""
    sent: list[dict[str, Any]] = []
    for program in programs() + scenarios():
        for request in sorted(program.glob("*.json")):
            sent.extend(_sent_events(program, request))
    events = {f"sample-{n}": event for n, event in enumerate(sent)}
    rng = random.Random(20261123)
    for n, event in enumerate(sent):
        for m in range(MUTANTS_PER_EVENT):
            mutant = copy.deepcopy(event)
            for _ in range(rng.randint(1, 6)):
                _mutate(mutant, rng, 0)
            events[f"mutant-{n}-{m}"] = mutant
    return events


def _sent_events(program: Path, request: Path) -> list[dict[str, Any]]:
    """The raw event payloads of one request (``real_samples`` decodes it)."""
    captured: list[dict[str, Any]] = []
    original = real_samples._event

    def capture(payload: Any, event_id: str | None) -> dict[str, Any]:
        captured.append(copy.deepcopy(payload))
        return original(payload, event_id)

    real_samples._event = capture
    try:
        real_samples.receive_request(json.loads(request.read_text()), real_samples.Received())
    finally:
        real_samples._event = original
    return captured


def _mutate(node: Any, rng: random.Random, depth: int) -> None:
    if isinstance(node, dict) and node:
        key = rng.choice(sorted(node))
        if depth > 6 or rng.random() < 0.3 or not isinstance(node[key], dict | list):
            roll = rng.random()
            if roll < 0.7:
                node[key] = copy.deepcopy(rng.choice(ODD))
            elif roll < 0.85:
                del node[key]
            else:
                node[rng.choice(KEYS)] = copy.deepcopy(rng.choice(ODD))
        else:
            _mutate(node[key], rng, depth + 1)
    elif isinstance(node, list) and node:
        i = rng.randrange(len(node))
        if depth > 6 or rng.random() < 0.3 or not isinstance(node[i], dict | list):
            node[i] = copy.deepcopy(rng.choice(ODD))
        else:
            _mutate(node[i], rng, depth + 1)


def outputs(raw: dict[str, Any]) -> str:
    """What the digest derives from ``raw`` (but for scrubbing and encoding), as digests:
    normalized, then marked (``mark_sdk_frames``) event, grouping components, summary,
    tags, then the grouping hash and fallback hashes."""
    event = normalize_event(raw, received_at=RECEIVED, client_ip="203.0.113.9")
    normalized = orjson.dumps(event)
    mark_sdk_frames(event)
    group = grouping.calculate(event)
    summary = summarize(event)
    parts = (
        _digest(normalized),
        _digest(orjson.dumps(event)),
        _digest(orjson.dumps(group.components)),
        _digest(repr(summary).encode()),
        _digest(orjson.dumps(event_tags(event))),
        group.hash,
        *group.fallback_hashes,
    )
    return " ".join(parts)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def all_outputs() -> dict[str, str]:
    ids = itertools.count()
    original = event_module.new_event_id
    event_module.new_event_id = lambda: f"{next(ids):032x}"  # deterministic ids
    try:
        return {name: outputs(raw) for name, raw in raw_events().items()}
    finally:
        event_module.new_event_id = original


@pytest.mark.skipif(not programs(), reason="tests/samples is missing")
def test_outputs_are_as_pinned() -> None:
    pinned = json.loads(PINNED.read_text())
    found = all_outputs()
    assert len(found) == len(pinned) > 500
    changed = {name: (pinned[name], out) for name, out in found.items() if pinned[name] != out}
    assert not changed, f"{len(changed)} events changed, e.g. {next(iter(changed.items()))}"


@pytest.mark.skipif(not programs(), reason="tests/samples is missing")
def test_fallback_hashes_are_those_of_the_previous_version() -> None:
    """``calculate`` computes the previous version's hash only when a frame contributed
    its source line; the result is the same as computing it for every event."""
    with_fallback = 0
    for raw in raw_events().values():
        event = normalize_event(raw, received_at=RECEIVED, client_ip=None, event_id="0" * 32)
        mark_sdk_frames(event)
        group = grouping.calculate(event)
        _, previous = grouping._components_and_hash(event, context_lines=False)
        assert group.fallback_hashes == (() if previous == group.hash else (previous,))
        with_fallback += bool(group.fallback_hashes)
    assert with_fallback > 10  # the PHP scenario's frames without a function, and mutants


if __name__ == "__main__":
    lines = (f"{json.dumps(name)}: {json.dumps(out)}" for name, out in all_outputs().items())
    PINNED.write_text("{\n" + ",\n".join(lines) + "\n}\n")
    print(f"wrote {PINNED}")
