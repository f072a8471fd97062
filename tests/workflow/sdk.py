"""Events made by the real Python SDK (the installed sentry-sdk): captured by an
in-memory transport, then stored through the digest's own preparation and batch write
(``Domain.events``), so filters are tested against what an SDK really sends."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson
import sentry_sdk
from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import Transport

from tracebox.protocol.envelope import parse_envelope


class Capture(Transport):
    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.events: list[dict[str, Any]] = []

    def capture_envelope(self, envelope: Envelope) -> None:
        parsed = parse_envelope(envelope.serialize(), max_items=100)
        for item in parsed.items:
            if item.headers.get("type") == "event":
                self.events.append(orjson.loads(item.payload))


@contextmanager
def sdk(**options: Any) -> Iterator[Capture]:
    """A real SDK client whose events land in ``Capture.events``."""
    capture = Capture()
    sentry_sdk.init(
        dsn="http://0123456789abcdef0123456789abcdef@localhost/1",
        transport=capture,
        default_integrations=False,
        auto_enabling_integrations=False,
        **options,
    )
    try:
        yield capture
    finally:
        sentry_sdk.flush()
        sentry_sdk.get_client().close()


def raise_and_capture(exc: Exception, **scope: Any) -> None:
    """Raise ``exc`` and capture it with tags/user/level set on an isolated scope."""
    with sentry_sdk.isolation_scope() as s:
        for key, value in scope.pop("tags", {}).items():
            s.set_tag(key, value)
        if "user" in scope:
            s.set_user(scope.pop("user"))
        if "level" in scope:
            s.set_level(scope.pop("level"))
        assert not scope, scope
        try:
            raise exc
        except Exception as e:
            sentry_sdk.capture_exception(e)
