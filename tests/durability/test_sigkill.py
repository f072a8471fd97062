"""Contract 1 and 2: SIGKILL the server under load; every acknowledged event survives, once."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import orjson
import pytest
import sqlalchemy as sa

from tests.helpers import start_server, wait_for
from tracebox.config import Settings
from tracebox.store import Database
from tracebox.store.tables import errors, events

SENDERS = 8
ACKS_BEFORE_KILL = 400
MAX_REQUESTS_PER_SENDER = 2000  # bounded load: the test stops by itself


def make_event(n: int) -> bytes:
    return orjson.dumps(
        {
            "event_id": uuid.uuid4().hex,
            "platform": "python",
            "exception": {
                "values": [
                    {
                        "type": "KeyError",
                        "value": f"missing key {n}",
                        "stacktrace": {
                            "frames": [
                                {
                                    "module": "app.views",
                                    "function": f"view_{n % 7}",
                                    "lineno": n,
                                    "in_app": True,
                                },
                            ]
                        },
                    }
                ]
            },
            "user": {"id": str(n % 50)},
        }
    )


def stored(db: Database) -> tuple[set[str], int, int]:
    with db.read() as conn:
        ids = {row[0] for row in conn.execute(sa.select(events.c.event_id))}
        rows = conn.execute(sa.select(sa.func.count()).select_from(events)).scalar_one()
        counted = conn.execute(sa.select(sa.func.coalesce(sa.func.sum(errors.c.events_count), 0)))
        return ids, int(rows), int(counted.scalar_one())


@pytest.mark.slow
def test_sigkill_under_load_loses_no_acknowledged_event(settings: Settings, db: Database) -> None:
    server = start_server(settings, workers=2)
    try:
        project, key = server.create_project("acme/durable")
        url = f"{server.url}/api/{project['id']}/store/"
        headers = {"X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={key['public_key']}"}
        acked: list[str] = []
        lock = threading.Lock()
        killed = threading.Event()

        def sender(worker: int) -> None:
            with httpx.Client(timeout=10) as client:
                for i in range(MAX_REQUESTS_PER_SENDER):
                    if killed.is_set():
                        return
                    body = make_event(worker * MAX_REQUESTS_PER_SENDER + i)
                    try:
                        r = client.post(url, content=body, headers=headers)
                    except httpx.TransportError:
                        return  # the server is gone: this event was never acknowledged
                    if r.status_code == 200:
                        with lock:
                            acked.append(r.json()["id"])

        with ThreadPoolExecutor(SENDERS) as pool:
            futures = [pool.submit(sender, w) for w in range(SENDERS)]
            wait_for(lambda: len(acked) >= ACKS_BEFORE_KILL, timeout=60)
            server.kill()  # mid-load: requests are in flight in every sender
            killed.set()
            for f in futures:
                f.result()
        assert len(acked) >= ACKS_BEFORE_KILL
    finally:
        server.stop()

    restarted = start_server(settings)
    try:

        def all_digested() -> bool:
            ids, _, _ = stored(db)
            return set(acked) <= ids

        wait_for(all_digested, timeout=60)
        ids, rows, counted = stored(db)
        assert set(acked) <= ids
        assert rows == len(ids)  # every event once
        assert counted == rows  # and counted once
    finally:
        restarted.stop()
