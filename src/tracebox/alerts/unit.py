"""The alert sender as a supervised unit of ``tracebox serve`` (shared decision 6): the
supervisor calls ``run_unit(ctx)`` in its background process, restarts it with backoff
if it raises, and reports ``ctx.beat`` in ``/-/health``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from tracebox.alerts.sender import AlertSender
from tracebox.config import Settings
from tracebox.store import Database


class UnitContext(Protocol):
    """What the supervisor hands a unit (``tracebox.supervisor.units.UnitContext``)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def db(self) -> Database: ...
    @property
    def stop(self) -> threading.Event: ...
    @property
    def beat(self) -> Callable[[], None]: ...


def run_unit(ctx: UnitContext) -> None:
    AlertSender(ctx.db, ctx.settings).run(ctx.stop, ctx.beat)
