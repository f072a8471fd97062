"""Alert tests: settings with fast retries, a world with a project, members and rules,
events through the real digest worker, and the real sender."""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
import sqlalchemy as sa

from tests.digest.test_worker import spool
from tracebox.accounts import users
from tracebox.alerts import AlertPolicy
from tracebox.alerts import rules as alert_rules
from tracebox.alerts.deliver import SendContext
from tracebox.alerts.sender import AlertSender
from tracebox.config import Settings
from tracebox.digest.worker import DigestWorker
from tracebox.models import AccessLevel, Project, User
from tracebox.spool import RecordKind, SpoolReader, SpoolRecord
from tracebox.store import Database, alert_outbox, members, projects
from tracebox.store.alert_outbox import Delivery
from tracebox.store.alerts import AlertAction, AlertRule, Channel, RuleSpec, Trigger
from tracebox.store.tables import alert_deliveries

PASSWORD = "correct horse battery"


@pytest.fixture
def settings(tmp_path: Any, database_url: str) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        external_url="http://tracebox.test",
        spool_commit_interval_ms=0.5,
        digest_poll_interval_ms=5,
        alert_allow_local_network=True,  # receivers run on 127.0.0.1
        alert_retry_initial_seconds=0.01,
        alert_retry_max_seconds=0.05,
        alert_sender_poll_interval_ms=10,
        alert_storm_quiet_seconds=0,
    )


@dataclass
class World:
    db: Database
    settings: Settings
    project: Project
    owner: User
    worker: DigestWorker
    sender: AlertSender
    ctx: SendContext
    _n: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def user(self, level: AccessLevel | None, name: str | None = None) -> User:
        name = name or f"user{next(self._n)}"
        with self.db.write() as conn:
            user = users.create_user(
                conn,
                username=name,
                email=f"{name}@example.com",
                name=name,
                password=PASSWORD,
                is_admin=False,
            )
            if level is not None:
                members.add(conn, self.project.id, user.id, level)
        return user

    def rule(self, trigger: Trigger = Trigger.NEW_ERROR, **fields: Any) -> AlertRule:
        spec = RuleSpec(name=fields.pop("name", f"{trigger} rule"), trigger=trigger, **fields)
        with self.db.write() as conn:
            return alert_rules.create_rule(
                conn, self.project.id, spec, alert_rules.Limits.from_settings(self.settings)
            )

    def action(
        self, rule: AlertRule, channel: Channel, target: str, secret: str | None = None
    ) -> AlertAction:
        limits = alert_rules.Limits.from_settings(self.settings)
        prepared = alert_rules.prepare_target(self.ctx, channel, target, limits, secret=secret)
        with self.db.write() as conn:
            return alert_rules.add_action(conn, self.ctx, rule, channel, prepared, limits)

    def send_events(self, *raws: dict[str, Any], now: float | None = None) -> None:
        """Spool events as ingestion does (the SDK's JSON as received, in a
        ``SpoolRecord``), then let the real digest worker normalize and store them."""
        received = now or time.time()
        records = []
        for raw in raws:
            event_id = uuid.uuid4().hex
            payload = orjson.dumps({"event_id": event_id, "platform": "python", **raw})
            records.append(self._record(RecordKind.EVENT, payload, received, event_id))
        spool(self.settings, records)
        self.worker.drain()

    def send_sessions(self, *sessions: dict[str, Any]) -> None:
        """``session`` items as an SDK sends them (``attrs.release``...)."""
        received = time.time()
        records = [self._record(RecordKind.SESSION, orjson.dumps(s), received) for s in sessions]
        spool(self.settings, records)
        self.worker.drain()

    def _record(
        self, kind: RecordKind, payload: bytes, received: float, event_id: str | None = None
    ) -> bytes:
        return SpoolRecord(
            kind=kind,
            project_id=self.project.id,
            key_id=1,
            received=received,
            payload=payload,
            client_ip="192.0.2.1" if kind is RecordKind.EVENT else None,
            event_id=event_id,
        ).encode()

    def deliveries(self, **where: Any) -> list[Delivery]:
        with self.db.read() as conn:
            query = sa.select(alert_deliveries.c.id).order_by(alert_deliveries.c.id)
            for k, v in where.items():
                query = query.where(alert_deliveries.c[k] == v)
            ids = [r[0] for r in conn.execute(query)]
            return alert_outbox.deliveries_by_id(conn, ids)

    def deliver_all(self, *, timeout: float = 20.0) -> None:
        """Run the sender until no delivery is pending or retrying (or fail)."""
        deadline = time.monotonic() + timeout
        while True:
            self.sender.drain()
            waiting = [d for d in self.deliveries() if d.status in ("pending", "retrying")]
            if not waiting:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"deliveries still waiting: {waiting}")
            time.sleep(0.01)


def error_event(
    type_: str = "ValueError", value: str = "bad value", **extra: Any
) -> dict[str, Any]:
    frames = [
        {"filename": "app/main.py", "function": "main", "lineno": 10, "in_app": True},
        {"filename": "app/handlers.py", "function": "handle", "lineno": 42, "in_app": True},
    ]
    return {
        "level": "error",
        "release": "web@1.0.0",
        "environment": "production",
        "exception": {
            "values": [{"type": type_, "value": value, "stacktrace": {"frames": frames}}]
        },
        "tags": {"browser": "Firefox"},
        "user": {"id": "u1"},
        **extra,
    }


@pytest.fixture
def world(settings: Settings, db: Database) -> World:
    with db.write() as conn:
        project = projects.create(conn, "acme/web", "web")
        projects.put_settings(conn, project.id, active=True, integrated=True)
        owner = users.create_user(
            conn,
            username="owner",
            email="owner@example.com",
            name="Owner",
            password=PASSWORD,
            is_admin=False,
        )
        members.add(conn, project.id, owner.id, AccessLevel.OWNER)
    worker = DigestWorker(
        db,
        SpoolReader(settings.spool_dir),
        batch_size=100,
        alert_policy=AlertPolicy.from_settings(settings),
    )
    ctx = SendContext.from_settings(settings)
    return World(db, settings, project, owner, worker, AlertSender(db, settings, ctx), ctx)
