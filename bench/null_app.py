"""The floor of the ingest path: an ASGI app that reads each request body and answers 200
with the envelope's event id, as ingest does, and does nothing else: no auth, no limits,
no spool, and only the envelope's first line inflated (the load generator counts an
answer only when it names the event it sent).

``http_server_bench.py --servers uvicorn floor`` runs it under uvicorn beside Tracebox's
own ingest app: the difference is what Tracebox's request path costs on top of the HTTP
server, the event loop and the kernel's sockets, which no change to Tracebox can remove.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson
from zlib_ng import zlib_ng

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
_HEADERS = [(b"content-type", b"application/json")]
_GZIP_WBITS = 31
_HEADER_BYTES = 512  # an envelope header holds the event id, the DSN and sent_at


async def app(
    scope: Scope,
    receive: Callable[[], Awaitable[Message]],
    send: Callable[[Message], Awaitable[None]],
) -> None:
    if scope["type"] == "lifespan":
        await receive()  # lifespan.startup
        await send({"type": "lifespan.startup.complete"})
        await receive()  # lifespan.shutdown
        await send({"type": "lifespan.shutdown.complete"})
        return
    chunks, more = [], True
    while more:  # the whole body, as ingest reads it
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    body = b"".join(chunks)
    answer = b"{}"
    if body:
        head = zlib_ng.decompressobj(_GZIP_WBITS).decompress(body, _HEADER_BYTES)
        answer = orjson.dumps({"id": orjson.loads(head.split(b"\n", 1)[0]).get("event_id")})
    await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
    await send({"type": "http.response.body", "body": answer})
