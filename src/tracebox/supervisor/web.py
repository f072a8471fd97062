"""The web workers (uvicorn), with ``serve`` owning SIGTERM and SIGINT.

uvicorn's ``Server.capture_signals`` re-raises the signal once its graceful shutdown is
done, which kills the process before ``serve`` can stop the background process and exit
0 (issue 9: the digest then stopped only when it noticed its parent was gone, seconds
later, and a supervisor killing the group then would cut its batch). Here the signal
starts both shutdowns at once and is not raised again:

- one worker (the default): uvicorn's server runs in serve's own process;
- several: uvicorn's process manager, told to stop the background process too.

In-flight requests get ``TRACEBOX_SHUTDOWN_TIMEOUT_SECONDS`` minus 2 s to finish.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from types import FrameType

import uvicorn
from uvicorn.supervisors.multiprocess import Multiprocess

from tracebox.config import Settings

APP = "tracebox.app:create_app_from_env"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def run_web(settings: Settings, *, on_stop: Callable[[], None]) -> None:
    """Serve HTTP until SIGTERM or SIGINT; ``on_stop`` is called as soon as one arrives."""
    config = uvicorn.Config(
        APP,
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        log_level=settings.log_level,
        access_log=False,
        loop="uvloop",
        http="httptools",
        timeout_graceful_shutdown=max(1, int(settings.shutdown_timeout_seconds) - 2),
    )
    if settings.workers == 1:
        _Server(config, on_stop).run()
    else:
        _Workers(config, [config.bind_socket()], on_stop).run()


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_stop: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_stop = on_stop

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """uvicorn's, without raising the signal again after the graceful shutdown."""

        def on_signal(sig: int, frame: FrameType | None) -> None:
            self._on_stop()
            self.handle_exit(sig, frame)

        previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


class _Workers(Multiprocess):
    """uvicorn's manager of several worker processes; its stop also stops ours."""

    def __init__(self, config: uvicorn.Config, sockets: list, on_stop: Callable[[], None]) -> None:  # type: ignore[type-arg]
        super().__init__(config, sockets)
        self._on_stop = on_stop

    def handle_int(self) -> None:
        self._on_stop()
        super().handle_int()

    def handle_term(self) -> None:
        self._on_stop()
        super().handle_term()
