"""The floor of the ingest path: an ASGI app that reads each request body and answers 200
with the envelope's event id, as ingest does, and does nothing else: no auth, no limits,
no spool, and only the envelope's first line inflated (the load generator counts an
answer only when it names the event it sent).

``http_server_bench.py --servers uvicorn floor`` runs it under uvicorn beside Tracebox's
own ingest app: the difference is what Tracebox's request path costs on top of the HTTP
server, the event loop and the kernel's sockets, which no change to Tracebox can remove.

``NULL_APP_DOES`` (in the environment, comma-separated) adds Tracebox's own pieces one by
one: ``inflate`` inflates the whole body (``protocol.decoding``), ``spool`` appends it to
a ``SpoolWriter`` in a temporary directory with the default group commit.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import orjson
from zlib_ng import zlib_ng

from tracebox.config import Settings
from tracebox.protocol.decoding import decompress
from tracebox.spool import SpoolWriter

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
_HEADERS = [(b"content-type", b"application/json")]
_GZIP_WBITS = 31
_HEADER_BYTES = 512  # an envelope header holds the event id, the DSN and sent_at
DOES = frozenset(filter(None, os.environ.get("NULL_APP_DOES", "").split(",")))
_SETTINGS = Settings()  # read once: building Settings costs milliseconds
_spool: SpoolWriter | None = None


async def app(
    scope: Scope,
    receive: Callable[[], Awaitable[Message]],
    send: Callable[[Message], Awaitable[None]],
) -> None:
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
        return
    chunks, more = [], True
    while more:  # the whole body, as ingest reads it
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    body = b"".join(chunks)
    answer = b"{}"
    if body:
        if "inflate" in DOES:
            data = decompress(body, "gzip", max_bytes=_SETTINGS.max_envelope_decompressed_bytes)
        else:
            data = zlib_ng.decompressobj(_GZIP_WBITS).decompress(body, _HEADER_BYTES)
        answer = orjson.dumps({"id": orjson.loads(data.split(b"\n", 1)[0]).get("event_id")})
        if _spool is not None:
            await _spool.append([data])
    await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
    await send({"type": "http.response.body", "body": answer})


async def _lifespan(
    receive: Callable[[], Awaitable[Message]], send: Callable[[Message], Awaitable[None]]
) -> None:
    global _spool
    await receive()  # lifespan.startup
    directory = Path(tempfile.mkdtemp(prefix="tracebox-null-app-"))
    if "spool" in DOES:
        _spool = SpoolWriter(
            directory / "spool",
            segment_bytes=_SETTINGS.spool_segment_bytes,
            max_undigested_bytes=1 << 40,
            commit_interval_s=_SETTINGS.spool_commit_interval_ms / 1000,
            retry_after=1,
        )
        await _spool.start()
    await send({"type": "lifespan.startup.complete"})
    await receive()  # lifespan.shutdown
    if _spool is not None:
        await _spool.close()
    shutil.rmtree(directory, ignore_errors=True)
    await send({"type": "lifespan.shutdown.complete"})
