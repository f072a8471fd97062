"""The ingestion benchmark's report as text."""

from __future__ import annotations

import os

from report import MB, PhaseSummary, Report, machine

CPUS = os.cpu_count() or 1


def render(report: Report) -> str:
    lines = [_title(report), *_machine(report), *_idle(report), *_corpus(report)]
    for phase in report.phases:
        lines += _phase(phase)
    lines += _rss(report) + _storage(report) + _targets(report) + _consistency(report)
    return "\n".join(lines)


def _title(report: Report) -> str:
    a = report.args
    return (
        f"Tracebox ingestion benchmark: {report.database()}, --workers {a.workers}, "
        f"--concurrency {a.concurrency}, --events {a.events:,}, --rate {a.rate:,.0f} "
        f"for {a.rate_seconds:.0f} s, --alert-rules {getattr(a, 'alert_rules', 0)}; "
        f"started {report.started}; source {report.source}"
    )


def _machine(report: Report) -> list[str]:
    m = machine(report.data_dir)
    return [
        f"machine: {m['cpus']} CPUs ({m['cpu_model']}), {m['memory_gib']} GiB RAM, "
        f"disk {m['disk']}, Linux {m['kernel']}, Python {m['python']}, SQLite {m['sqlite']}"
    ]


def _idle(report: Report) -> list[str]:
    if report.idle_before is None:
        return []
    return [f"machine busy {report.idle_before:.0%} in the 3 s before the load started"]


def _corpus(report: Report) -> list[str]:
    c = report.corpus
    if not c:
        return []
    return [
        f"corpus: {c['envelopes']:,.0f} envelopes, event JSON mean {c['event_bytes_mean']:,.0f} B "
        f"(min {c['event_bytes_min']:,.0f}, quartiles {c['event_bytes_q1']:,.0f} / "
        f"{c['event_bytes_median']:,.0f} / {c['event_bytes_q3']:,.0f}, "
        f"max {c['event_bytes_max']:,.0f}), gzip body mean {c['gzip_bytes_mean']:,.0f} B; "
        f"built in {c['build_seconds']:.1f} s before the server was loaded"
    ]


def _ms(latency: dict[str, float]) -> str:
    return "  ".join(f"{k} {v:.1f}" for k, v in latency.items()) + " ms"


def _phase(p: PhaseSummary) -> list[str]:
    how = f"closed loop, {p.connections} connections" if p.mode == "closed" else "open loop"
    lines = [
        f"{p.name} ({how}): {p.acknowledged:,} of {p.sent:,} acknowledged in {p.seconds:.2f} s"
        f" = {p.acknowledged_per_s:,.0f} events/s acknowledged; statuses {p.statuses}"
        + (f"; {p.unfinished} unfinished" if p.unfinished else ""),
    ]
    if p.mode == "open":
        lines.append(f"  latency from schedule: {_ms(p.latency_from_schedule_ms)}")
        lines.append(f"  latency from send:     {_ms(p.latency_ms)}  ({p.connections} conns)")
    else:
        lines.append(f"  latency: {_ms(p.latency_ms)}")
    during = ""
    if p.digested_per_s_during_ingest is not None:
        during = (
            f"; while sending {p.digested_per_s_during_ingest:,.0f}/s, "
            f"backlog at the last acknowledgement {p.backlog_at_last_ack:,}"
        )
    batches = ""
    if p.digest_batches:
        batches = (
            f"; {p.digest_batches:,} batches of {p.digest_records / p.digest_batches:,.1f} "
            "records on average"
        )
    lines.append(
        f"  digested: all in {p.digested_seconds:.2f} s from the first send = "
        f"{p.digested_per_s:,.0f} events/s{during}{batches}"
    )
    lines.append(f"  peak RSS of the server processes in this phase: {p.rss_peak / MB:,.1f} MB")
    cpu = ", ".join(f"{name} {used:.1f}" for name, used in p.cpu_seconds.items() if used >= 0.05)
    lines.append(f"  CPU seconds until digested (wall {p.digested_seconds:.1f} s): {cpu}")
    lines.append(f"  CPU ms per acknowledged event: {_per_event(p)}")
    other = p.cpu_seconds.get("other processes", 0.0) / (p.digested_seconds * CPUS)
    if other > 0.05:
        lines.append(
            f"  WARNING: other processes used {other:.0%} of the machine's CPU during this "
            "phase; the figures above are lower than on an idle machine"
        )
    return lines


def _per_event(p: PhaseSummary) -> str:
    """CPU milliseconds per event of each process of ours, and the ceiling they imply:
    the events/s at which they would use every CPU of the machine."""
    ours = {k: v for k, v in p.cpu_seconds.items() if k not in NOT_OURS}
    if not p.acknowledged or not ours:
        return "-"
    per_event = {k: v * 1000 / p.acknowledged for k, v in ours.items()}
    total = sum(per_event.values())
    shown = ", ".join(f"{k} {v:.3f}" for k, v in per_event.items() if v >= 0.001)
    return f"{shown}; total {total:.3f} = at most {CPUS * 1000 / total:,.0f} events/s"


NOT_OURS = ("other processes", "stolen by hypervisor")


def _rss(report: Report) -> list[str]:
    rss = report.rss
    if rss is None:
        return []
    lines = [
        f"peak RSS, sum of all server processes: {rss.peak_total / MB:,.1f} MB "
        f"(idle before the load {rss.totals[0][1] / MB:,.1f} MB; {rss.samples} samples, "
        f"every {rss.interval * 1000:.0f} ms)"
    ]
    for pid, peak in sorted(rss.peaks.items()):
        lines.append(f"  pid {pid:>7} {rss.names.get(pid, '?'):<42} peak {peak / MB:7.1f} MB")
    return lines


def _storage(report: Report) -> list[str]:
    delta = report.stored_delta()
    if not delta:
        return []
    per_event = report.stored_per_event()
    mean = report.corpus.get("event_bytes_mean", 0.0)
    basis = "database file, WAL checkpointed"
    if report.database() != "SQLite":
        basis = f"sum of tables after VACUUM; pg_database_size +{delta['total'] / MB:,.1f} MB"
    lines = [
        f"stored: {report.stored_added() / MB:,.1f} MB added ({basis}) "
        f"for {report.final_events:,} events = "
        f"{per_event:,.0f} B per event ({per_event / mean:.1%} of the mean event, "
        f"{per_event / mean * 10:.2f} KB per 10 KB event); {report.errors:,} errors",
    ]
    for table, size in delta.items():
        if table != "total" and size:
            per_event = size / report.final_events
            lines.append(f"  {table:<40} {size / MB:8.2f} MB  {per_event:7.0f} B/event")
    if report.stored:
        lines.append(f"  {report.stored.notes}")
    return lines


def _targets(report: Report) -> list[str]:
    lines = ["targets:"]
    for name, want, got, ok in report.targets():
        lines.append(f"  {name:<34} {want:>10}  measured {got:>10}  {'met' if ok else 'NOT MET'}")
    return lines


def _consistency(report: Report) -> list[str]:
    verdict = "OK" if report.consistent() else "FAIL"
    return [
        f"consistency: {report.final_events:,} events in the database, "
        f"{report.counted:,} counted on their errors, {report.acknowledged:,} acknowledged: "
        f"{verdict}"
    ]
