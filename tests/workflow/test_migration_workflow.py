"""Migration 0008_workflow upgrades a database that already holds errors and events."""

from __future__ import annotations

import time

from alembic import command
from sqlalchemy import select, text

from tests.inprocess import exception_event
from tracebox.config import Settings
from tracebox.digest.prepare import Preparer
from tracebox.protocol.event import normalize_event
from tracebox.store import Database
from tracebox.store import digest as store_digest
from tracebox.store.engine import alembic_config
from tracebox.store.tables import errors, project_environments, releases


def test_upgrade_keeps_data_and_fills_environments_and_releases(settings: Settings) -> None:
    url = settings.resolved_database_url()
    command.upgrade(alembic_config(url), "0005_privacy")
    db = Database(url)
    try:
        now = time.time()
        with db.write() as conn:
            conn.execute(
                text(
                    "INSERT INTO projects (id, path, name, description, monitor_access_level,"
                    " created_at) VALUES (1, 'acme/web', 'web', '', 'enabled', :now)"
                ),
                {"now": now},
            )
            conn.execute(
                text(
                    "INSERT INTO releases (project_id, version, created_at)"
                    " VALUES (1, 'web@2.0.0', :t)"
                ),
                {"t": now - 10},
            )
        raws = [
            exception_event(
                "A", "a", release="web@1.0.0", environment="production", timestamp=now - 50
            ),
            exception_event(
                "A", "a", release="web@2.0.0", environment="staging", timestamp=now - 40
            ),
        ]
        prepared = [
            Preparer().prepare_event(1, normalize_event(r, received_at=now, client_ip="192.0.2.1"))
            for r in raws
        ]
        with db.engine.begin() as conn:  # the schema before 0008: rows as its digest wrote them
            for p in prepared:
                conn.execute(
                    text(
                        "INSERT INTO errors (project_id, grouping_hash, grouping_version,"
                        " fingerprint, title, type, value, culprit, platform, level, status,"
                        " regressed, first_seen, last_seen, events_count, users_count)"
                        " VALUES (1, :h, 'v', '[]', 'A: a', 'A', 'a', '', 'python', 'error',"
                        " 'resolved', false, :t, :t, 1, 0) ON CONFLICT DO NOTHING"
                    ),
                    {"h": p.grouping_hash, "t": p.timestamp},
                )
                conn.execute(
                    text(
                        "INSERT INTO events (project_id, error_id, event_id, timestamp,"
                        " received_at, level, environment, release, payload)"
                        " VALUES (1, (SELECT id FROM errors), :e, :t, :t, 'error', :env, :rel, :p)"
                    ),
                    {
                        "e": p.event_id,
                        "t": p.timestamp,
                        "env": p.environment,
                        "rel": p.release,
                        "p": p.payload,
                    },
                )
        db.migrate()
        with db.read() as conn:
            envs = {
                r.name: (r.first_seen, r.last_seen)
                for r in conn.execute(select(project_environments))
            }
            made = {r.version: r.created_at for r in conn.execute(select(releases))}
            error = conn.execute(select(errors)).one()
        assert envs == {"production": (now - 50, now - 50), "staging": (now - 40, now - 40)}
        assert made == {"web@1.0.0": now - 50, "web@2.0.0": now - 10}  # sentry-cli's row kept
        assert (error.status, error.resolution, error.assignee_id) == ("resolved", "now", None)
        with db.write() as conn:  # the digest works on the upgraded schema
            store_digest.write_events(conn, prepared[:1])
    finally:
        db.dispose()
