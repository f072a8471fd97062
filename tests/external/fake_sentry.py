"""A fake Sentry web API on a free loopback port, built from the documented response
shapes (reference section 10; GitLab's spec/fixtures/sentry/*.json).

The base URL's first path segment picks a behaviour, so one server serves every case:
``http://127.0.0.1:PORT`` answers normally, ``.../e500`` with 500, ``.../e404`` with 404,
``.../slow`` after ``SLOW_SECONDS``, ``.../big`` with a body past 1 MiB, ``.../html`` with
a non-JSON page, ``.../redirect`` with a 302. Token ``bad`` gets 401, ``noscope`` 403.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "sntrys_fake_token_0123456789abcdef"
PROJECT_ID = "42"
ORG = {"id": "7", "slug": "acme-org", "name": "Acme Org"}
SLOW_SECONDS = 3.0


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


@dataclass
class FakeSentry:
    issues: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[tuple[str, str, str]] = field(default_factory=list)  # method, path, auth
    url: str = ""

    def add_issues(self, count: int) -> None:
        now = time.time()
        for n in range(count):
            issue_id = str(1001 + n)
            self.issues[issue_id] = {
                "id": issue_id,
                "shortId": f"WEB-{n + 1}",
                "title": f"ZeroDivisionError: fake error {n + 1}",
                "culprit": f"app.views in handler_{n + 1}",
                "permalink": f"https://sentry.example/acme-org/web/issues/{issue_id}/",
                "logger": None,
                "level": "error",
                "status": "unresolved",
                "statusDetails": {},
                "isPublic": False,
                "platform": "python",
                "type": "error",
                "metadata": {"type": "ZeroDivisionError", "value": f"fake error {n + 1}"},
                "count": str(10 + n),
                "userCount": n,
                "numComments": 0,
                "firstSeen": _iso(now - 86400 - n * 60),
                "lastSeen": _iso(now - n * 60),
                "project": {"id": PROJECT_ID, "name": "Web", "slug": "web"},
                "stats": {"24h": [[int(now // 3600 * 3600 - h * 3600), 1] for h in range(24)]},
                "annotations": [],
                "assignedTo": None,
                "hasSeen": False,
                "isBookmarked": False,
                "isSubscribed": False,
                "subscriptionDetails": None,
                "shareId": None,
            }

    def projects(self) -> list[dict[str, Any]]:
        return [
            {
                "id": PROJECT_ID,
                "name": "Web",
                "slug": "web",
                "status": "active",
                "platform": "python",
                "isPublic": False,
                "isMember": True,
                "hasAccess": True,
                "dateCreated": _iso(0),
                "firstEvent": None,
                "features": [],
                "color": "#bf6e3f",
                "avatar": {"avatarType": "letter_avatar"},
                "organization": ORG,
            },
            {
                "id": "43",
                "name": "Mobile",
                "slug": "mobile",
                "status": "active",
                "organization": ORG,
            },
        ]

    def latest_event(self, issue: dict[str, Any]) -> dict[str, Any]:
        frames = [
            {
                "filename": "app/views.py",
                "absPath": "/srv/app/views.py",
                "module": "app.views",
                "function": "handler",
                "lineNo": 12,
                "colNo": None,
                "inApp": True,
                "context": [[11, "def handler():\n"], [12, "    return 1 / 0\n"]],
            },
        ]
        exception = {
            "type": "ZeroDivisionError",
            "value": issue["metadata"]["value"],
            "module": None,
            "stacktrace": {"frames": frames},
        }
        return {
            "id": "a" * 32,
            "eventID": "a" * 32,
            "groupID": issue["id"],
            "projectID": PROJECT_ID,
            "dateCreated": issue["lastSeen"],
            "dateReceived": issue["lastSeen"],
            "title": issue["title"],
            "message": "",
            "culprit": issue["culprit"],
            "platform": "python",
            "type": "error",
            "metadata": issue["metadata"],
            "tags": [{"key": "level", "value": "error"}],
            "user": None,
            "contexts": {},
            "sdk": {"name": "sentry.python"},
            "errors": [],
            "entries": [{"type": "exception", "data": {"values": [exception]}}],
        }


class _Handler(BaseHTTPRequestHandler):
    fake: FakeSentry

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def _handle(self, method: str) -> None:
        parts = urlsplit(self.path)
        path, query = parts.path, parse_qs(parts.query, keep_blank_values=True)
        auth = self.headers.get("Authorization", "")
        self.fake.requests.append((method, self.path, auth))
        mode, _, rest = path.lstrip("/").partition("/")
        if mode != "api":
            path = "/" + rest
            if self._special(mode):
                return
        if auth == "Bearer bad":
            return self._send(401, {"detail": "Invalid token"})
        if auth == "Bearer noscope":
            return self._send(403, {"detail": "You do not have permission"})
        if auth != f"Bearer {TOKEN}":
            return self._send(401, {"detail": "Authentication credentials were not provided."})
        self._route(method, path, query)

    def _special(self, mode: str) -> bool:
        if mode == "e500":
            self._send(500, {"detail": "Internal Error"})
        elif mode == "e404":
            self._send(404, {"detail": "The requested resource does not exist"})
        elif mode == "slow":
            time.sleep(SLOW_SECONDS)
            self._send(200, [])
        elif mode == "big":
            self._send(200, b"[" + b'"x",' * 400_000 + b'"x"]')
        elif mode == "html":
            self._send(200, b"<html><body>Sentry login</body></html>")
        elif mode == "redirect":
            self._send(302, {}, {"Location": "http://169.254.169.254/latest/meta-data/"})
        else:
            return False
        return True

    def _route(self, method: str, path: str, query: dict[str, list[str]]) -> None:
        fake = self.fake
        segments = [s for s in path.split("/") if s]
        if segments == ["api", "0", "projects"]:
            return self._send(200, fake.projects())
        if segments[:3] == ["api", "0", "projects"] and segments[-1] == "issues":
            return self._issues(segments[3:5], query)
        if segments[:3] == ["api", "0", "issues"] and len(segments) >= 4:
            issue = fake.issues.get(segments[3])
            if issue is None:
                return self._send(404, {"detail": "The requested resource does not exist"})
            if segments[4:] == ["events", "latest"]:
                return self._send(200, fake.latest_event(issue))
            if method == "PUT":
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                issue["status"] = body["status"]
                return self._send(200, {"status": issue["status"], "statusDetails": {}})
            return self._send(
                200,
                {
                    **issue,
                    "firstRelease": None,
                    "lastRelease": None,
                    "tags": [],
                    "activity": [],
                    "pluginIssues": [],
                },
            )
        self._send(404, {"detail": "The requested resource does not exist"})

    def _issues(self, org_project: list[str], query: dict[str, list[str]]) -> None:
        if org_project != ["acme-org", "web"]:
            return self._send(404, {"detail": "The requested resource does not exist"})
        words = query.get("query", ["is:unresolved"])[0].split()
        status = next((w[3:] for w in words if w.startswith("is:")), None)
        text = " ".join(w for w in words if not w.startswith("is:"))
        found = [
            i
            for i in self.fake.issues.values()
            if (status is None or i["status"] == status) and text.lower() in i["title"].lower()
        ]
        limit = int(query.get("limit", ["100"])[0])
        offset = int(query.get("cursor", ["0:0:0"])[0].split(":")[1])
        page = found[offset : offset + limit]
        base = f"{self.fake.url}{self.path.split('?')[0]}"
        prev_c, next_c = f"0:{max(0, offset - limit)}:1", f"0:{offset + limit}:0"
        link = (
            f'<{base}?&cursor={prev_c}>; rel="previous"; results="{str(offset > 0).lower()}"; '
            f'cursor="{prev_c}", <{base}?&cursor={next_c}>; rel="next"; '
            f'results="{str(offset + limit < len(found)).lower()}"; cursor="{next_c}"'
        )
        self._send(200, page, {"Link": link})


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that stops reading an oversized answer is expected here


class RunningFake:
    def __init__(self, fake: FakeSentry) -> None:
        handler = type("Handler", (_Handler,), {"fake": fake})
        self.server = _QuietServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        fake.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.fake = fake
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
