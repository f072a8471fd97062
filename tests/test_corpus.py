"""The whole corpus in-process: every real SDK request of ``tests/samples`` (the standard
program runs and the scenarios) is posted to ingestion as the SDK sent it, digested, and
its project's error list and every error's details page render, with each event's title.

Fast (no live server, no SDK toolchain): the regression net for the hot path."""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select, update

from tests.inprocess import PASSWORD, Ui, ui_client
from tests.protocol.real_samples import printed_event_ids, programs, scenarios
from tracebox.config import Settings
from tracebox.digest.worker import DigestWorker
from tracebox.models import AccessLevel
from tracebox.spool import SpoolReader
from tracebox.store import Database, client_keys, members, projects
from tracebox.store.tables import client_keys as client_keys_table
from tracebox.store.tables import events
from tracebox.store.tables import projects as projects_table

SAMPLE_PROJECT_ID = 42  # every sample was captured with the DSN .../42
SAMPLE_PUBLIC_KEY = "0123456789abcdef0123456789abcdef"
ERROR_LINK = re.compile(r'href="(/corpus/sdk/-/error_tracking/(\d+))"')


@pytest.fixture
def database_url() -> str:
    return ""  # SQLite: the corpus exercises the protocol, not the database


@pytest.fixture
def ui(settings: Settings, db: Database) -> Iterator[Ui]:
    yield from ui_client(settings, db)


def sample_project(ui: Ui) -> None:
    """Project 42 with the samples' public key, and a signed-in Reporter."""
    with ui.db.write() as conn:
        conn.execute(
            projects_table.insert().values(
                id=SAMPLE_PROJECT_ID,
                path="corpus/sdk",
                name="sdk",
                description="",
                monitor_access_level="enabled",
                created_at=0.0,
            )
        )
        projects.put_settings(conn, SAMPLE_PROJECT_ID, active=True, integrated=True)
        key = client_keys.create(conn, SAMPLE_PROJECT_ID)
        conn.execute(
            update(client_keys_table)
            .where(client_keys_table.c.id == key.id)
            .values(public_key=SAMPLE_PUBLIC_KEY)
        )
    user = ui.user("reader")
    with ui.db.write() as conn:
        members.add(conn, SAMPLE_PROJECT_ID, user.id, AccessLevel.REPORTER)
    assert ui.sign_in(user, PASSWORD).status_code == 303


def post(ui: Ui, sample: dict[str, object]) -> None:
    headers = [(k, v) for k, v in sample["headers"] if k.lower() not in ("host", "content-length")]  # type: ignore[attr-defined]
    response = ui.client.request(
        str(sample["method"]),
        str(sample["path"]),
        content=base64.b64decode(str(sample["body_b64"])),
        headers=headers,
    )
    assert response.status_code == 200, (sample["path"], response.text)


@pytest.mark.parametrize("program", [*programs(), *scenarios()], ids=lambda p: p.name)
def test_every_sample_is_stored_listed_and_shown(ui: Ui, program: Path) -> None:
    sample_project(ui)
    for path in sorted(program.glob("*.json")):
        post(ui, json.loads(path.read_text()))
    DigestWorker(ui.db, SpoolReader(ui.settings.spool_dir), batch_size=500).drain()
    listed = ui.client.get("/corpus/sdk/-/error_tracking?status=all")
    assert listed.status_code == 200
    errors = dict(ERROR_LINK.findall(listed.text))
    assert errors, f"{program.name}: no error listed"
    for url in errors:
        page = ui.client.get(url)
        assert page.status_code == 200, url
        title = re.search(r'id="event-title">([^<]*)<', page.text)
        assert title and html.unescape(title.group(1)).strip(), url
        older = re.search(r'rel="next" href="([^"]+)"', page.text)
        while older:  # step through every event of the error
            page = ui.client.get(html.unescape(older.group(1)))
            assert page.status_code == 200
            older = re.search(r'rel="next" href="([^"]+)"', page.text)
    with ui.db.read() as conn:
        stored = set(conn.execute(select(events.c.event_id)).scalars())
    assert set(printed_event_ids(program)) <= stored  # every event the SDK reported sending
