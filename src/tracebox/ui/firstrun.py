"""First-run guidance: a project without errors shows its DSN, setup snippets and a
"send a test event" button, which sends one event through this server's own ingestion
endpoint (in-process, over ASGI: the real path an SDK's event takes)."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from tracebox import __version__
from tracebox.accounts.policy import Action
from tracebox.accounts.projects import ProjectAccess
from tracebox.models import ClientKey, ErrorTrackingSettings
from tracebox.protocol.dsn import build_dsn
from tracebox.store import client_keys
from tracebox.ui.links import project_url
from tracebox.ui.snippets import Snippet, snippets
from tracebox.ui.web import Req, can

TEST_EVENT_TIMEOUT_SECONDS = 10.0
PROBE_ID = "first-error-probe"  # the element of firstrun.html that polls for a first error


@dataclass(frozen=True)
class Guide:
    active: bool  # error tracking is on with the integrated backend
    dsn: str | None  # shown to Maintainers and above only (spec 2.2: a secret)
    snippets: list[Snippet]


def guide(r: Req, access: ProjectAccess, settings: ErrorTrackingSettings | None) -> Guide:
    active = settings is not None and settings.active and settings.integrated
    key = _active_key(r, access.project.id) if can(access, Action.ADMIN_ERROR_TRACKING) else None
    dsn = build_dsn(r.ctx.settings.external_url, key.public_key, key.project_id) if key else None
    return Guide(active=active, dsn=dsn, snippets=snippets(dsn or "<your DSN>"))


def _active_key(r: Req, project_id: int) -> ClientKey | None:
    with r.db.read() as conn:
        keys = client_keys.list_for_project(conn, project_id, limit=100)
    return next((k for k in keys if k.active), None)


async def send_test_event(r: Req, project: str) -> Response:
    access = await run_in_threadpool(r.project, project, Action.ADMIN_ERROR_TRACKING)
    key = await run_in_threadpool(_active_key, r, access.project.id)
    back = project_url(access.project.path, "error_tracking")
    if key is None:
        r.flash("alert", "This project has no active client key: create one in the settings.")
        return r.redirect(back)
    event = test_event(r.principal.user.username)
    import httpx  # here: a web worker that never sends a test event does not load it (~4 MB)

    transport = httpx.ASGITransport(app=r.request.app, client=("127.0.0.1", 0))
    async with httpx.AsyncClient(transport=transport, base_url="http://tracebox") as client:
        response = await client.post(
            f"/api/{access.project.id}/store/",
            content=orjson.dumps(event),
            headers={
                "Content-Type": "application/json",
                "X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={key.public_key}, "
                f"sentry_client=tracebox-ui/{__version__}",
            },
            timeout=TEST_EVENT_TIMEOUT_SECONDS,
        )
    if response.status_code == 200:
        r.flash("notice", "A test event was sent. It appears here within a few seconds.")
    else:
        detail = response.headers.get("x-sentry-error", f"HTTP {response.status_code}")
        r.flash("alert", f"The test event was refused: {detail}")
    return r.redirect(back)


def test_event(username: str) -> dict[str, Any]:
    frames = [
        {
            "filename": "tracebox/ui/firstrun.py",
            "function": "send_test_event",
            "module": "tracebox.ui.firstrun",
            "lineno": 1,
            "in_app": True,
            "context_line": 'raise TraceboxTestError("This is a test event")',
        }
    ]
    return {
        "event_id": uuid.uuid4().hex,
        "timestamp": time.time(),
        "platform": "python",
        "level": "error",
        "logger": "tracebox.ui",
        "release": "tracebox-test@1",
        "exception": {
            "values": [
                {
                    "type": "TraceboxTestError",
                    "value": "This is a test event sent from the Tracebox web UI",
                    "stacktrace": {"frames": frames},
                }
            ]
        },
        "tags": {"source": "tracebox-ui"},
        "user": {"username": username},
        "sdk": {"name": "tracebox.ui", "version": __version__},
    }
