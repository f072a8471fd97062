"""Migration 0003_pipeline upgrades a database holding data, on SQLite and PostgreSQL."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command

from tests.store.test_digest_store import make_event
from tracebox.config import Settings
from tracebox.store import Database, errors_read
from tracebox.store import digest as store_digest
from tracebox.store.engine import alembic_config
from tracebox.store.payloads import PayloadEncoder

NOW = 1_700_000_000.0


def event_payload(n: int) -> dict[str, object]:
    return {
        "event_id": f"{n:032x}",
        "timestamp": NOW + n,
        "level": "error",
        "environment": "production",
        "tags": [["shard", str(n % 2)]],
        "user": {"id": f"u{n}"},
    }


def test_upgrade_fills_error_hashes_and_counts_the_stored_events_tags(settings: Settings) -> None:
    url = settings.resolved_database_url()
    command.upgrade(alembic_config(url), "0001")
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    encoder = PayloadEncoder()
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO projects (id, path, name, description, monitor_access_level,"
                " created_at) VALUES (1, 'acme/web', 'web', '', 'enabled', 0)"
            )
        )
        conn.execute(
            sa.text(
                "INSERT INTO errors (id, project_id, grouping_hash, grouping_version,"
                " fingerprint, title, type, value, culprit, platform, level, status, regressed,"
                " first_seen, last_seen, events_count, users_count) VALUES (1, 1, :h, 'v1',"
                " '[]', 't', '', '', '', 'python', 'error', 'unresolved', false, 0, 0, 3, 3)"
            ),
            {"h": "a" * 32},
        )
        for n in range(3):
            conn.execute(
                sa.text(
                    "INSERT INTO events (project_id, error_id, event_id, timestamp, received_at,"
                    " level, payload) VALUES (1, 1, :id, :ts, :ts, 'error', :p)"
                ),
                {"id": f"{n:032x}", "ts": NOW + n, "p": encoder.encode(event_payload(n))},
            )
    engine.dispose()

    db = Database(url)
    db.migrate()
    try:
        with db.read() as conn:
            hashes = conn.execute(sa.text("SELECT project_id, hash, error_id FROM error_hashes"))
            assert [tuple(r) for r in hashes] == [(1, "a" * 32, 1)]
            tags = errors_read.top_tags(conn, 1, keys=10, values=5)
            version = conn.execute(sa.text("SELECT config_version FROM projects")).scalar_one()
        by_key = {t.key: (t.total, t.top_values) for t in tags}
        assert by_key["shard"] == (3, [("0", 2), ("1", 1)])
        assert by_key["level"] == (3, [("error", 3)])
        assert by_key["user.id"][0] == 3
        assert version == 0
        with db.write() as conn:  # the old error still receives its events
            result = store_digest.write_events(conn, [make_event(1, 7)])
        assert result.created == [] and list(result.counts) == [1]
    finally:
        db.dispose()
