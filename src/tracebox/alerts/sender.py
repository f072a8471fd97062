"""The alert sender: a loop that claims due deliveries from the outbox and sends them.

A delivery is claimed with a lease (``alert_lease_seconds``) in one short transaction,
sent outside any transaction, and its outcome recorded only by the lease holder. A node
killed mid-send leaves a lease that expires, and another pass sends it again with the
same idempotency key, which receivers use to drop a repeat. Several nodes never hold a
lease on one delivery at once (``FOR UPDATE SKIP LOCKED`` / SQLite's single writer).
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from tracebox.alerts import deliver
from tracebox.alerts.deliver import Backoff, SendContext
from tracebox.alerts.message import build
from tracebox.alerts.outbound import Answer
from tracebox.config import Settings
from tracebox.logs import LoggedCondition, first_line
from tracebox.store import Database, alert_outbox
from tracebox.store.alert_outbox import Delivery
from tracebox.store.alerts import Channel, get_action_by_id

log = logging.getLogger("tracebox.alerts.sender")

HOUSEKEEPING_INTERVAL_S = 300.0
COOLDOWN_MEMORY_S = 8 * 86400.0  # longer than the longest cooldown (a week)


class AlertSender:
    """``run(stop)`` until ``stop`` is set; ``heartbeat`` is the unix time of the last
    pass (for the supervisor's ``/-/health``)."""

    name = "alert-sender"

    def __init__(self, db: Database, settings: Settings, ctx: SendContext | None = None) -> None:
        self.db = db
        self.ctx = ctx or SendContext.from_settings(settings)
        self.owner = secrets.token_hex(8)  # this process's claims
        self.batch_size = settings.alert_sender_batch_size
        self.lease_s = settings.alert_lease_seconds
        self.poll_s = settings.alert_sender_poll_interval_ms / 1000
        self.backoff = Backoff(
            settings.alert_retry_initial_seconds, settings.alert_retry_max_seconds
        )
        self.log_days = settings.alert_delivery_log_days
        self.threads = settings.alert_sender_threads
        self.heartbeat = 0.0
        self._next_housekeeping = 0.0
        self._stop = threading.Event()
        reminder = settings.log_reminder_seconds
        self._database_down = LoggedCondition(
            log, "database unavailable; alerts wait in the outbox", reminder_seconds=reminder
        )
        self._failing = LoggedCondition(log, "alert sender pass failed", reminder_seconds=reminder)

    def run(self, stop: threading.Event, beat: Callable[[], None] | None = None) -> None:
        """Send until ``stop`` is set; ``beat`` (the supervisor's heartbeat) is called
        after every pass. Deliveries claimed but not yet sent when ``stop`` is set are
        handed back at once, so a stop waits only for the requests in flight."""
        self._stop = stop
        with ThreadPoolExecutor(self.threads, thread_name_prefix="alert-send") as pool:
            while not stop.is_set():
                self.heartbeat = time.time()
                if beat is not None:
                    beat()
                try:
                    sent = self.run_once(pool)
                    self._housekeeping()
                except Exception as e:
                    # An outage fails every pass: logged as episodes, not once a pass.
                    if self.db.ping():
                        self._failing.occurred(f"retrying ({type(e).__name__})", traceback=True)
                    else:
                        self._database_down.occurred(f"retrying ({first_line(e)})")
                    stop.wait(min(5.0, self.poll_s * 10))
                    continue
                self._database_down.cleared()
                self._failing.cleared()
                if sent == 0:
                    stop.wait(self.poll_s)

    def run_once(self, pool: ThreadPoolExecutor | None = None) -> int:
        """Claim and send one batch of due deliveries; return how many were claimed."""
        now = time.time()
        with self.db.write() as conn:
            claimed = alert_outbox.claim(
                conn, owner=self.owner, now=now, limit=self.batch_size, lease_s=self.lease_s
            )
        if pool is None or len(claimed) < 2:
            for d in claimed:
                self.attempt(d)
        else:
            list(pool.map(self.attempt, claimed))
        return len(claimed)

    def drain(self, *, max_passes: int = 1000) -> int:
        """Send everything due now (tests, ``tracebox alerts``); return deliveries claimed."""
        total = 0
        for _ in range(max_passes):
            n = self.run_once()
            total += n
            if n == 0:
                break
        return total

    def attempt(self, d: Delivery) -> Answer | None:
        if self._stop.is_set():  # stopping: another pass (or node) sends it
            with self.db.write() as conn:
                alert_outbox.release(conn, d.id, self.owner)
            return None
        try:
            answer = self._send(d)
        except Exception as e:  # a bug must not hold the lease until it expires
            log.exception("alert delivery %d failed unexpectedly", d.id)
            answer = Answer(False, error=f"internal error: {type(e).__name__}")
        now = time.time()
        result = deliver.outcome(answer, d.attempts + 1, now, d.deadline_at, self.backoff)
        with self.db.write() as conn:
            alert_outbox.finish(
                conn,
                d.id,
                self.owner,
                status=result.status,
                now=now,
                next_attempt_at=result.next_attempt_at,
                error=result.error,
                response_status=answer.status,
                response_excerpt=answer.body or None,
            )
        log.info("alert delivery %d (%s) %s", d.id, d.channel, result.status)
        return answer

    def _send(self, d: Delivery) -> Answer:
        with self.db.read() as conn:
            message = build(conn, d.kind, d.payload, self.ctx.base_url)
            action = get_action_by_id(conn, d.action_id) if d.action_id else None
        return deliver.send(
            self.ctx,
            Channel(d.channel),
            message,
            action=action,
            recipient=d.recipient,
            key=d.idempotency_key,
            now=time.time(),
        )

    def _housekeeping(self) -> None:
        now = time.time()
        if now < self._next_housekeeping:
            return
        self._next_housekeeping = now + HOUSEKEEPING_INTERVAL_S
        with self.db.write() as conn:
            alert_outbox.prune(
                conn,
                cooldowns_before=now - COOLDOWN_MEMORY_S,
                log_before=now - self.log_days * 86400,
            )
