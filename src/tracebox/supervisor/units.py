"""The registry of background units: the loops ``tracebox serve`` runs beside the web.

Every unit runs as a thread of the one background process (``supervisor.host``), which
``serve`` keeps alive (``supervisor.process``). A unit that raises is restarted with
backoff; its heartbeat is what ``/-/health`` reports; SIGTERM sets ``ctx.stop``.

To add a loop (an alert sender, a cleanup), write a function in your package::

    def run_unit(ctx: UnitContext) -> None:
        while not ctx.stop.is_set():
            ...one small step (a batch, a sweep)...
            ctx.beat()           # at least every few seconds: "alive and not stuck"
            ctx.stop.wait(5.0)   # a pause that ends at once on SIGTERM

and add one line to ``UNITS``. Do not start threads or processes of your own: one more
Python process costs ~80 MB, and the whole server (1 web worker) must stay within 250 MB.
A step should end within a few seconds so SIGTERM stops everything within
``TRACEBOX_SHUTDOWN_TIMEOUT_SECONDS``.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass

from tracebox.config import Settings
from tracebox.store import Database


@dataclass(frozen=True)
class Unit:
    name: str  # shown in /-/health and the logs; names its heartbeat file
    # "package.module:function", imported in the background process only (web workers
    # read the registry for the names, and should not import every unit's code).
    target: str

    def load(self) -> Callable[[UnitContext], None]:
        module, _, function = self.target.partition(":")
        run: Callable[[UnitContext], None] = getattr(importlib.import_module(module), function)
        return run


UNITS: tuple[Unit, ...] = (
    Unit("digest", "tracebox.digest.unit:run_unit"),
    Unit("alert-sender", "tracebox.alerts.unit:run_unit"),
    Unit("cleanup", "tracebox.lifecycle.unit:run_unit"),
)


@dataclass(frozen=True)
class UnitContext:
    name: str
    settings: Settings
    db: Database  # shared by the units of the process
    stop: threading.Event  # set on SIGTERM (or when serve went away): finish the step, return
    beat: Callable[[], None]  # "alive": call at least every few seconds, cheap to call often
