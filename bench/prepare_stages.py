"""CPU per event of each stage of the digest's preparing (``digest.prepare``): the spool
record's decode (the gzip body as sent, inflated), parse, normalize, scrub (as sent:
before the parse, in the digest), in-app marks and grouping, summary, tags, payload
encoding (orjson, then zstd without a dictionary).

Builds the ingest benchmark's corpus (``corpus.py``), takes each envelope's event
payload as the spool holds it, and times every stage alone over all events, as CPU time
(``time.process_time``) with the garbage collector off (the prepare process collects
rarely: ``prepare_process.GC_THRESHOLD``); the lowest of ``--repeat`` passes is kept.
Each stage gets the output of the one before, as in the digest. The web worker's side,
encoding the spool record, is printed apart, with the zstd record it wrote before it
spooled a gzip body as sent. Not a test: run it by
hand, alternating two trees with ``PYTHONPATH`` to compare them,

    PYTHONPATH=src .venv/bin/python bench/prepare_stages.py --events 1500 --repeat 5
"""

from __future__ import annotations

import argparse
import gc
import gzip
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import corpus
import orjson

from tracebox import grouping, privacy
from tracebox.grouping.inapp import mark_sdk_frames
from tracebox.protocol.envelope import parse_envelope
from tracebox.protocol.event import normalize_event, summarize
from tracebox.protocol.tags import event_tags
from tracebox.spool.record import RecordKind, SentGzip, SpoolRecord
from tracebox.store.payloads import PayloadEncoder


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=1500, help="events in the corpus")
    p.add_argument("--repeat", type=int, default=5, help="timed passes per stage")
    p.add_argument("--seed", type=int, default=7)
    return p.parse_args()


def payloads(count: int, seed: int) -> list[bytes]:
    """Each corpus envelope's event payload, as the SDK sent it."""
    return [payload for payload, _ in sent_events(count, seed)]


def sent_events(count: int, seed: int) -> list[tuple[bytes, SentGzip]]:
    """Each corpus envelope's event payload, and the body it came in (gzip, event-only:
    ingest spools the body as sent)."""
    built = corpus.build(count, seed=seed, processes=1)
    out = []
    for body in built.bodies:
        [item] = parse_envelope(gzip.decompress(body), max_items=10).items
        assert item.offset is not None
        out.append((bytes(item.payload), SentGzip(body, item.offset)))
    return out


def normalized(payload: bytes) -> dict[str, Any]:
    return normalize_event(orjson.loads(payload), received_at=time.time(), client_ip="203.0.113.7")


def grouped(event: dict[str, Any]) -> grouping.Grouping:
    mark_sdk_frames(event)
    return grouping.calculate(event)


def spool_record(sent: tuple[bytes, SentGzip | None]) -> bytes:
    """The record the web worker spools for an event: the gzip body as sent, or (``None``)
    the payload compressed (``spool.record``)."""
    payload, body = sent
    return SpoolRecord(
        RecordKind.EVENT, 1, 1, 1_700_000_000.0, payload, event_id="0" * 32, sent=body
    ).encode()


def cpu_us(work: Callable[[Any], Any], inputs: list[Any], repeat: int) -> tuple[float, list[Any]]:
    """The lowest CPU microseconds per input over ``repeat`` passes, and the outputs."""
    best, outputs = float("inf"), []
    for _ in range(repeat):
        start = time.process_time()
        outputs = [work(x) for x in inputs]
        best = min(best, time.process_time() - start)
    return best / len(inputs) * 1e6, outputs


def main() -> None:
    args = parse_args()
    bodies = sent_events(args.events, args.seed)
    raw = [payload for payload, _ in bodies]
    print(f"{len(raw)} events, mean {statistics.fmean(map(len, raw)):,.0f} B as sent")
    print(f"python {platform.python_version()}, {platform.processor() or platform.machine()}")
    encoder = PayloadEncoder()
    gc.disable()
    rows = []
    spooled, records = cpu_us(spool_record, bodies, args.repeat)
    rows.append(
        ("spool record decode (inflate)", cpu_us(SpoolRecord.decode, records, args.repeat)[0])
    )
    unsent = [(payload, None) for payload in raw]
    zstd_spooled, zstd_records = cpu_us(spool_record, unsent, args.repeat)
    zstd_decode = cpu_us(SpoolRecord.decode, zstd_records, args.repeat)[0]
    parse, _ = cpu_us(orjson.loads, raw, args.repeat)
    rows.append(("parse (orjson)", parse))
    total, events = cpu_us(normalized, raw, args.repeat)
    rows.append(("normalize (without the parse)", total - parse))
    # The digest scrubs the payload as sent (then parses and normalizes what that gives,
    # which the rows above time) and finishes the normalized event; scrubbing the
    # normalized event is what it does when a payload is refused, shown apart.
    sent, scrubbed = cpu_us(privacy.scrub_sent, raw, args.repeat)
    rows.append(("scrub as sent, default settings", sent))
    refused = sum(s is None for s in scrubbed)
    if refused:
        print(f"{refused} payloads refused by scrub_sent")
    aside, events = cpu_us(privacy.scrub, events, args.repeat)
    rows.append(("in-app marks and grouping", cpu_us(grouped, events, args.repeat)[0]))
    rows.append(("summary", cpu_us(summarize, events, args.repeat)[0]))
    rows.append(("tags", cpu_us(lambda e: tuple(event_tags(e)), events, args.repeat)[0]))
    rows.append(("encode (orjson + zstd)", cpu_us(encoder.encode, events, args.repeat)[0]))
    gc.enable()
    for name, us in rows:
        print(f"  {name:32} {us:7.1f} us/event")
    print(f"  {'all':32} {sum(us for _, us in rows):7.1f} us/event")
    print(f"  (scrubbing once normalized instead: {aside:.1f} us/event)")
    mean, zstd_mean = statistics.fmean(map(len, records)), statistics.fmean(map(len, zstd_records))
    print(f"  (the web worker's spool record encode: {spooled:.1f} us/event, {mean:,.0f} B)")
    print(
        f"  (the payload zstd-compressed instead: encode {zstd_spooled:.1f} us/event,"
        f" {zstd_mean:,.0f} B, decode {zstd_decode:.1f} us/event)"
    )


if __name__ == "__main__":
    main()
