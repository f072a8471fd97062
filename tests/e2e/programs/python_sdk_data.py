"""A real sentry-sdk (Python 2.x, the one Tracebox installs) sending what issue 12 keeps:
an exception with local variables and an HTML attachment, user feedback about it (a
hand-built ``feedback`` item: the Python SDK has no helper), logs (``enable_logs``) in
the same trace as the exception, and a message its ``before_send`` drops (which the SDK
reports in a ``client_report``: reason ``before_send``, category ``error``).

Environment: SENTRY_DSN (required). Prints ``event_id=<32 hex>``, ``trace_id=<32 hex>``
and ``feedback_id=<32 hex>``. Exits 0 only if every request the SDK made was answered
2xx and nothing was dropped (the transport's own bookkeeping, as tests/sdk/python).
"""

from __future__ import annotations

import logging
import os
import sys
import uuid
from datetime import UTC, datetime

import sentry_sdk
from sentry_sdk.envelope import Envelope, Item, PayloadRef
from sentry_sdk.transport import HttpTransport

ATTACHMENT = b"<html><body><script>alert('attachment')</script>order 7</body></html>"
_problems: list[str] = []
log = logging.getLogger("shop.checkout")


class RecordingTransport(HttpTransport):
    def on_dropped_event(self, reason):  # type: ignore[no-untyped-def]
        _problems.append(f"dropped: {reason}")
        return super().on_dropped_event(reason)

    def _send_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return super()._send_request(*args, **kwargs)
        except Exception as exc:
            _problems.append(repr(exc))
            raise


def charge(order_id: int, quantity: int) -> None:
    card_holder = "Ann <script>x</script>"  # a local variable the page must escape
    unit_price = 12.5
    if quantity > 5:
        raise ValueError(f"invalid quantity: {quantity} for {card_holder}, {unit_price}")


def checkout(order_id: int) -> None:
    items = {"sku-1": 7}
    charge(order_id, items["sku-1"])


def drop_test_messages(event, hint):  # type: ignore[no-untyped-def]
    return None if event.get("message") == "dropped by before_send" else event


def feedback_envelope(event_id: str) -> tuple[Envelope, str]:
    feedback_id = uuid.uuid4().hex
    feedback = {
        "event_id": feedback_id,
        "timestamp": datetime.now(UTC).isoformat(),
        "type": "feedback",
        "level": "info",
        "release": "shop@2.0.0",
        "contexts": {
            "feedback": {
                "message": "The pay button froze, then this error.",
                "contact_email": "ann@example.com",
                "name": "Ann",
                "associated_event_id": event_id,
                "source": "api",
            }
        },
    }
    envelope = Envelope(headers={"event_id": feedback_id})
    envelope.add_item(Item(payload=PayloadRef(json=feedback), type="feedback"))
    return envelope, feedback_id


def main() -> int:
    dsn = os.environ.get("SENTRY_DSN")
    if not dsn:
        print("SENTRY_DSN is not set", file=sys.stderr)
        return 2
    sentry_sdk.init(
        dsn=dsn,
        release="shop@2.0.0",
        environment="production",
        transport=RecordingTransport,
        enable_logs=True,
        include_local_variables=True,  # the default, said out loud
        before_send=drop_test_messages,
        debug=bool(os.environ.get("TRACEBOX_SDK_DEBUG")),
    )
    logging.basicConfig(level=logging.INFO)
    with sentry_sdk.new_scope() as scope:
        scope.add_attachment(bytes=ATTACHMENT, filename="receipt.html", content_type="text/html")
        log.info("checkout started for order %s", 7)
        sentry_sdk.logger.warning("stock for {sku} is low", sku="sku-1")
        try:
            checkout(7)
        except ValueError as exc:
            event_id = sentry_sdk.capture_exception(exc)
        trace_id = scope.get_active_propagation_context().trace_id
    assert event_id is not None
    sentry_sdk.capture_message("dropped by before_send")
    client = sentry_sdk.get_client()
    envelope, feedback_id = feedback_envelope(event_id)
    assert client.transport is not None
    client.transport.capture_envelope(envelope)
    client.flush(timeout=10)
    client.close(timeout=10)
    print(f"event_id={event_id}")
    print(f"trace_id={trace_id}")
    print(f"feedback_id={feedback_id}")
    for problem in _problems:
        print(f"transport problem: {problem}", file=sys.stderr)
    return 1 if _problems else 0


if __name__ == "__main__":
    sys.exit(main())
