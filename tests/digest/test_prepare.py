"""The digest's preparation of records: the stages in order, and a failure set aside."""

from __future__ import annotations

import time
from typing import Any

import orjson
import pytest

from tracebox import privacy
from tracebox.digest.config import ProjectConfig
from tracebox.digest.prepare import PreparedBatch, Preparer, read_records
from tracebox.spool import RecordKind, SpoolRecord

CONFIGS = {1: ProjectConfig(project_id=1, version=0)}


def record(n: int, **fields: Any) -> bytes:
    raw = {"message": f"order {n} failed", "tags": {"n": str(n)}, **fields}
    return SpoolRecord(
        RecordKind.EVENT, 1, 1, time.time(), orjson.dumps(raw), "203.0.113.9", f"{n:032x}"
    ).encode()


def test_stages_see_the_normalized_event_before_grouping() -> None:
    seen: list[dict[str, Any]] = []

    def scrub(event: dict[str, Any], config: ProjectConfig) -> dict[str, Any]:
        assert config is CONFIGS[1]
        seen.append(event)
        return {**event, "logentry": {"formatted": "[scrubbed]", "message": "[scrubbed]"}}

    records = read_records([record(1, user={"ip_address": "{{auto}}"})])
    batch = Preparer(stages=[scrub]).prepare(records, CONFIGS)
    assert seen[0]["tags"] == [["n", "1"]]  # normalized: tags as pairs
    assert seen[0]["user"]["ip_address"] == "203.0.113.9"  # from the record's client_ip
    [event] = batch.events
    assert event.title == "[scrubbed]"  # grouping and summary come after the stage


def test_an_event_that_makes_a_stage_fail_is_set_aside_alone() -> None:
    def fail_on_two(event: dict[str, Any], config: ProjectConfig) -> dict[str, Any]:
        if event["event_id"] == f"{2:032x}":
            raise RuntimeError("a bug")
        return event

    records = read_records([record(1), record(2), record(3)])
    batch = Preparer(stages=[fail_on_two]).prepare(records, CONFIGS)
    assert [e.event_id for e in batch.events] == [f"{1:032x}", f"{3:032x}"]
    assert dict(batch.dropped) == {(1, "event_failed"): 1}
    assert dict(batch.invalid) == {"event_failed": 1}


def test_an_event_whose_scan_fails_is_set_aside_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Events are scrubbed as sent a group at a time, ahead of the rest of their
    preparing: a failure there costs its own record, not its group's."""
    scrub_sent = privacy.scrub_sent

    def fail_on_two(payload: bytes, settings: privacy.PrivacySettings) -> privacy.Sent | None:
        if b"order 2 " in payload:
            raise RuntimeError("a bug")
        return scrub_sent(payload, settings)

    monkeypatch.setattr(privacy, "scrub_sent", fail_on_two)
    records = read_records([record(n) for n in range(1, 5)])
    batch = Preparer(scan_group=4).prepare(records, CONFIGS)
    assert [e.event_id for e in batch.events] == [f"{n:032x}" for n in (1, 3, 4)]
    assert dict(batch.dropped) == {(1, "event_failed"): 1}


def test_records_of_a_deleted_project_are_set_aside() -> None:
    other = SpoolRecord(RecordKind.EVENT, 2, 1, time.time(), b"{}", None, "f" * 32).encode()
    batch = Preparer().prepare(read_records([record(1), other]), CONFIGS)
    assert [e.project_id for e in batch.events] == [1]
    assert dict(batch.dropped) == {}  # no project left to count it against
    assert dict(batch.invalid) == {"project_deleted": 1}


def test_tags_and_fallback_hashes_reach_the_prepared_event() -> None:
    [event] = Preparer().prepare(read_records([record(1)]), CONFIGS).events
    assert ("n", "1") in event.tags
    assert ("level", "error") in event.tags
    assert event.fallback_hashes == ()


def test_a_batch_prepared_in_two_parts_adds_up_in_record_order() -> None:
    """The digest prepares the last records of a batch while its prepare process does
    the others (``DigestWorker._hand``): the parts are joined as one batch."""
    first, second = PreparedBatch(), PreparedBatch()
    first.sessions[1].append({"sid": "a"})  # type: ignore[typeddict-item]
    second.sessions[1].append({"sid": "b"})  # type: ignore[typeddict-item]
    second.sessions[2].append({"sid": "c"})  # type: ignore[typeddict-item]
    first.dropped[(1, "event_invalid_json")] = 2
    second.dropped[(1, "event_invalid_json")] = 1
    second.invalid["event_invalid_json"] = 1
    second.sdk.discarded[(1, 0, "error", "queue_overflow")] = 3
    first.extend(second)
    assert [u["sid"] for u in first.sessions[1]] == ["a", "b"]
    assert [u["sid"] for u in first.sessions[2]] == ["c"]
    assert first.dropped == {(1, "event_invalid_json"): 3}
    assert first.invalid == {"event_invalid_json": 1}
    assert first.sdk.discarded == {(1, 0, "error", "queue_overflow"): 3}
