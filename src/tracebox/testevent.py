"""``tracebox send-test-event``: one real event through the Python SDK, and its fate."""

from __future__ import annotations

from typing import Any

import sentry_sdk
from sentry_sdk.transport import HttpTransport


class _RecordingTransport(HttpTransport):
    """The SDK's own HTTP transport, remembering each response status and network error.
    (Hooks private methods of the pinned sentry-sdk version; pyproject pins it.)"""

    statuses: list[int]
    failures: list[str]

    def __init__(self, options: dict[str, Any]) -> None:
        super().__init__(options)
        self.statuses = []
        self.failures = []

    def _handle_response(self, response: Any, envelope: Any) -> None:
        self.statuses.append(int(response.status))
        super()._handle_response(response=response, envelope=envelope)

    def _handle_request_error(
        self, envelope: Any, loss_reason: str = "network", record_reason: str = "network_error"
    ) -> None:
        self.failures.append(loss_reason)
        super()._handle_request_error(envelope, loss_reason, record_reason)


def _raise_test_error() -> None:
    raise RuntimeError("Tracebox test event: if you can read this, ingestion works")


def send_test_event(dsn: str, *, timeout: float = 10.0) -> tuple[bool, str]:
    """Capture one exception with the SDK and flush. Returns (accepted, message)."""
    sentry_sdk.init(
        dsn=dsn,
        transport=_RecordingTransport,
        release="tracebox-test@1",
        default_integrations=False,
    )
    try:
        _raise_test_error()
    except RuntimeError as error:
        event_id = sentry_sdk.capture_exception(error)
    transport = sentry_sdk.get_client().transport
    assert isinstance(transport, _RecordingTransport)
    sentry_sdk.flush(timeout=timeout)
    statuses, failures = transport.statuses, transport.failures
    if statuses and all(s == 200 for s in statuses) and not failures:
        return True, f"accepted: event {event_id} (HTTP 200)"
    return False, f"not accepted: event {event_id}, statuses {statuses}, failures {failures}"
