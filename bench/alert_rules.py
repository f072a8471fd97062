"""``--alert-rules N``: N active alert rules on the benchmark's project, a realistic mix
of triggers and filters, each with an email action. No SMTP server is configured, so a
firing costs its outbox rows and one failed attempt, never a network request."""

from __future__ import annotations

from tracebox.store import Database
from tracebox.store import alerts as store
from tracebox.store.alerts import Channel, RuleSpec, Trigger

MIX = [
    RuleSpec(name="new errors", trigger=Trigger.NEW_ERROR),
    RuleSpec(name="new fatal errors", trigger=Trigger.NEW_ERROR, min_level="fatal"),
    RuleSpec(name="regressions", trigger=Trigger.REGRESSION),
    RuleSpec(name="surge", trigger=Trigger.SURGE, threshold=1000, window_minutes=10),
    RuleSpec(
        name="users surge",
        trigger=Trigger.SURGE,
        threshold=500,
        threshold_kind="users",
        window_minutes=60,
        environment="production",
    ),
    RuleSpec(name="new in production", trigger=Trigger.NEW_ERROR, environment="production"),
    RuleSpec(name="tagged", trigger=Trigger.NEW_ERROR, tag_key="browser", tag_value="Firefox"),
    RuleSpec(
        name="surge vs yesterday",
        trigger=Trigger.SURGE,
        threshold=200,
        window_minutes=5,
        compare_factor=3,
    ),
    RuleSpec(name="release", trigger=Trigger.RELEASE_HEALTH, crash_free_below=95, threshold=100),
    RuleSpec(name="unignored", trigger=Trigger.UNIGNORED),
]


def create(url: str, project_id: int, count: int) -> None:
    db = Database(url)
    try:
        with db.write() as conn:
            for n in range(count):
                spec = MIX[n % len(MIX)]
                rule = store.create_rule(conn, project_id, spec)
                store.add_action(
                    conn,
                    rule,
                    Channel.EMAIL,
                    target="bench@example.invalid",
                    target_display="bench@example.invalid",
                    encrypted_secret=None,
                )
    finally:
        db.dispose()
