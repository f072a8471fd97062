"""Alerts (issue 14): rules evaluated in the digest's transaction write an outbox; a
supervised sender delivers it by email, webhook, Slack, Discord and Teams.

- ``evaluate(conn, batch, policy)``: the digest's one call per batch.
- ``hooks``: ``ignored_condition_passed`` and ``assigned`` for the workflow issue.
- ``sender.AlertSender``: the delivery loop (``run(stop_event)``, a heartbeat).
"""

from tracebox.alerts.evaluate import AlertPolicy, evaluate
from tracebox.alerts.model import AlertBatch, ErrorActivity, EventInfo, LazyBatch

__all__ = ["AlertBatch", "AlertPolicy", "ErrorActivity", "EventInfo", "LazyBatch", "evaluate"]
