"""A background unit for tests/runtime: crashes on its first run, then works until stopped."""

from __future__ import annotations

from tracebox.supervisor.units import UnitContext

runs: list[str] = []


def run_unit(ctx: UnitContext) -> None:
    runs.append(ctx.name)
    if len(runs) == 1:
        raise ValueError("first run fails")
    while not ctx.stop.is_set():
        ctx.beat()
        ctx.stop.wait(0.01)
