"""The SDK matrix's per-program results: what went over the wire, and the JSON file.

``wire_summary`` describes the requests the wiretap relayed to the server (endpoint per
item type, compression, authentication). ``record`` merges one program's result into
the JSON file named by TRACEBOX_SDK_RESULTS, under a lock, so that pytest-xdist workers
can share it; ``render_matrix.py`` turns that file into docs/sdk-compatibility.md.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.sdk.capture_server import CapturedRequest
from tests.sdk.run_programs import auth_style, summarize

RESULTS_ENV = "TRACEBOX_SDK_RESULTS"
AUTH_NAMES = {
    "X-Sentry-Auth": "X-Sentry-Auth header",
    "query": "query string",
    "envelope-dsn": "envelope dsn header",
    "Authorization": "Authorization header",
}


def _compression(request: CapturedRequest) -> str:
    value = request.header("Content-Encoding")
    if value is None:
        return "none"
    return value.strip().lower() or "none (empty Content-Encoding header)"


def wire_summary(requests: Iterable[CapturedRequest]) -> dict[str, Any]:
    """{item type: [endpoints]}, compressions, authentications and request count."""
    endpoints: dict[str, set[str]] = {}
    compression: set[str] = set()
    auth: set[str] = set()
    count = 0
    for request in requests:
        if request.endpoint is None:
            continue
        count += 1
        for item in summarize(request)["items"]:
            item_type = "event" if item == "event(store)" else str(item)
            endpoints.setdefault(item_type, set()).add(request.endpoint)
        compression.add(_compression(request))
        auth.add(" + ".join(AUTH_NAMES.get(a, a) for a in auth_style(request).split("+")))
    return {
        "requests": count,
        "endpoints": {t: sorted(e) for t, e in sorted(endpoints.items())},
        "compression": sorted(compression),
        "auth": sorted(auth),
    }


def results_path() -> Path | None:
    value = os.environ.get(RESULTS_ENV)
    return Path(value) if value else None


def record(path: Path, result: dict[str, Any]) -> None:
    """Merge ``result`` into ``path`` (``{"programs": {id: result}}``), atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = json.loads(path.read_text()) if path.exists() else {"programs": {}}
        data["programs"][result["id"]] = result
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        tmp.replace(path)
