"""Demo data for the screenshots: the fixture's source map uploaded for a release, a
deploy, and browser errors whose minified frames the digest maps (and one it cannot)."""

from __future__ import annotations

import time
import uuid
from typing import Any

from tests.sourcemaps.bundles import DEBUG_ID, app_bundle, line_and_column
from tracebox.digest.prepare import Preparer
from tracebox.protocol.event import normalize_event
from tracebox.store import Database, artifacts, projects, releases
from tracebox.store import digest as store_digest
from tracebox.symbolication import MapCache, StoreArtifacts, Symbolicator
from tracebox.symbolication.uploads import UploadLimits, assemble

RELEASE = "storefront@2.4.1"
URL = "https://shop.example.com/static/app.min.js"


def browser_event(*, release: str, mapped: bool, at: float) -> dict[str, Any]:
    """An event as @sentry/browser sends it for the fixture's TypeError."""
    frames = []
    for needle, function in (("t.total()", "s"), ("return i(r)", "o.total"), ("throw new", "i")):
        line, column = line_and_column(needle)
        frames.append(
            {
                "filename": URL,
                "abs_path": URL,
                "function": function,
                "lineno": line,
                "colno": column + (2 if needle == "t.total()" else 7 if "return" in needle else 0),
                "in_app": True,
            }
        )
    event: dict[str, Any] = {
        "event_id": uuid.uuid4().hex,
        "timestamp": at,
        "platform": "javascript",
        "level": "error",
        "release": release,
        "environment": "production",
        "exception": {
            "values": [
                {
                    "type": "TypeError",
                    "value": "price must be a number, got string",
                    "mechanism": {"type": "onerror", "handled": False},
                    "stacktrace": {"frames": frames},
                }
            ]
        },
        "request": {"url": "https://shop.example.com/checkout"},
        "sdk": {"name": "sentry.javascript.browser", "version": "11.12.0"},
    }
    if mapped:
        event["debug_meta"] = {
            "images": [{"type": "sourcemap", "code_file": URL, "debug_id": DEBUG_ID}]
        }
    return event


def add(db: Database, project_id: int) -> None:
    now = time.time()
    with db.read() as conn:
        project = projects.get(conn, project_id)
    assert project is not None
    data = app_bundle()
    with db.write() as conn:
        chunk = artifacts.save_chunk(conn, data, now=now - 3600)
    done = assemble(
        db,
        UploadLimits(10**8, 10**9),
        [project],
        checksum=chunk,
        chunks=[chunk],
        release=RELEASE,
        dist="",
        now=now - 3600,
    )
    assert done.state == "ok", done.detail
    with db.write() as conn:
        row = releases.ensure(conn, project_id, RELEASE, now=now - 3600)
        releases.update_release(conn, row.id, date_released=now - 3000)
        releases.add_deploy(
            conn,
            row.id,
            environment="production",
            name=None,
            url=None,
            date_started=now - 2900,
            date_finished=now - 2800,
        )
    preparer = Preparer()
    symbolicator = Symbolicator(StoreArtifacts(db), MapCache(10**8))
    symbolicator.begin_batch()
    raws = [browser_event(release=RELEASE, mapped=True, at=now - 60 * n) for n in range(1, 9)]
    raws.append(browser_event(release="storefront@2.4.0", mapped=False, at=now - 7200))
    prepared = []
    for raw in raws:
        event = normalize_event(raw, received_at=now, client_ip="192.0.2.1")
        symbolicator.symbolicate(project_id, event)  # as the digest does, before grouping
        prepared.append(preparer.prepare_event(project_id, event))
    with db.write() as conn:
        store_digest.write_events(conn, prepared)
