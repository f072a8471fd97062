"""Demo alert rules and a delivery log for the screenshots (``make screenshots``).

Targets are stored as the sender would see them, without resolving their hosts (the
screenshot machine has no network), and deliveries get realistic outcomes."""

from __future__ import annotations

import time
from typing import Any

import sqlalchemy as sa

from tracebox.alerts.deliver import target_cipher
from tracebox.config import Settings
from tracebox.store import Database, alert_outbox
from tracebox.store import alerts as store
from tracebox.store.alerts import Channel, RuleSpec, Trigger
from tracebox.store.tables import alert_deliveries, errors

RULES: list[tuple[RuleSpec, list[tuple[Channel, str, str]]]] = [
    (
        RuleSpec(name="Every new error", trigger=Trigger.NEW_ERROR, min_level="error"),
        [
            (Channel.EMAIL, "", "project members"),
            (
                Channel.SLACK,
                "https://hooks.slack.com/services/T000/B000/XXXX",
                "https://hooks.slack.com",
            ),
        ],
    ),
    (
        RuleSpec(
            name="Checkout surges",
            trigger=Trigger.SURGE,
            threshold=100,
            threshold_kind="events",
            window_minutes=10,
            compare_factor=5,
            environment="production",
            tag_key="transaction",
            tag_value="/checkout",
            cooldown_minutes=60,
        ),
        [
            (
                Channel.WEBHOOK,
                "https://oncall.example.com/hooks/tracebox",
                "https://oncall.example.com",
            )
        ],
    ),
    (
        RuleSpec(
            name="Regressions in production", trigger=Trigger.REGRESSION, environment="production"
        ),
        [(Channel.DISCORD, "https://discord.com/api/webhooks/1/abc", "https://discord.com")],
    ),
    (
        RuleSpec(
            name="Release health below 98%",
            trigger=Trigger.RELEASE_HEALTH,
            crash_free_below=98,
            threshold=500,
            release="storefront@2.*",
        ),
        [
            (
                Channel.TEAMS,
                "https://prod.westeurope.logic.azure.com/workflows/x",
                "https://prod.westeurope.logic.azure.com",
            )
        ],
    ),
]

# (rule index, action index, channel outcome: status, http status, error, answer)
OUTCOMES = [
    ("sent", 250, None, "accepted"),
    ("sent", 200, None, "ok"),
    ("failed", 404, "HTTP 404", '{"message": "Unknown Webhook", "code": 10015}'),
    ("retrying", 503, "HTTP 503", "upstream unavailable"),
    ("sent", 202, None, ""),
]


def populate_alerts(db: Database, settings: Settings, project_id: int, path: str) -> None:
    cipher = target_cipher(settings)
    now = time.time()
    with db.write() as conn:
        created = []
        for spec, actions in RULES:
            rule = store.create_rule(conn, project_id, spec)
            kept = [
                store.add_action(
                    conn,
                    rule,
                    channel,
                    target=cipher.encrypt(url) if url else "",
                    target_display=shown,
                    encrypted_secret=cipher.encrypt("whsec_demo_secret_value"),
                )
                for channel, url, shown in actions
            ]
            created.append((rule, kept))
        top = list(
            conn.execute(
                sa.select(errors.c.id, errors.c.title)
                .where(errors.c.project_id == project_id)
                .order_by(errors.c.events_count.desc())
                .limit(4)
            )
        )
        header = {"project": {"id": project_id, "path": path, "name": "Storefront"}}
        plan = [(0, 0, 0), (0, 1, 1), (2, 0, 2), (1, 0, 3), (0, 1, 1)]
        for n, (ri, ai, oi) in enumerate(plan):
            rule, actions = created[ri]
            error_id, title = top[n % len(top)]
            _delivery(
                conn, rule, actions[ai], error_id, title, header, OUTCOMES[oi], now - n * 1300
            )


def _delivery(
    conn: sa.Connection,
    rule: store.AlertRule,
    action: store.AlertAction,
    error_id: int,
    title: str,
    header: dict[str, Any],
    outcome: tuple[str, int, str | None, str],
    at: float,
) -> None:
    payload = {
        **header,
        "rule": {"id": rule.id, "name": rule.name, "trigger": rule.trigger.value},
        "error": {"id": error_id, "title": title, "culprit": ""},
    }
    nid = alert_outbox.add_notification(
        conn,
        project_id=rule.project_id,
        rule_id=rule.id,
        kind=rule.trigger.value,
        error_id=error_id,
        payload=payload,
        now=at,
    )
    recipient = (
        "ops@storefront.example" if action.channel == Channel.EMAIL else action.target_display
    )
    receiver = alert_outbox.NewDelivery(action.channel.value, recipient, action.id)
    alert_outbox.add_deliveries(
        conn, rule.project_id, nid, [receiver], now=at, due=at, retry_period_s=86400
    )
    status, code, error, body = outcome
    attempts = 4 if status == "retrying" else 1
    conn.execute(
        alert_deliveries.update()
        .where(alert_deliveries.c.notification_id == nid)
        .values(
            status=status,
            attempts=attempts,
            response_status=code,
            last_error=error,
            response_excerpt=body or None,
            sent_at=at + 1 if status == "sent" else None,
            next_attempt_at=time.time() + 240,
            updated_at=at + 1,
        )
    )
