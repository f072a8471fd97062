"""A deterministic corpus of realistic Sentry error events, pre-encoded as gzip envelopes.

Events look like what the Python, Node and Java SDKs send: 10-40 frames with source
context and local variables, 10-30 breadcrumbs, tags, contexts, a request with headers,
a user from a pool, release, environment and sdk. ``SIGNATURES`` distinct stack traces
(distinct in-app ``module:function`` chains and exception types) make as many errors.
Each event's uncompressed size is drawn uniformly from ``[min_bytes, max_bytes]``.

Building is done once, before any timed run: every envelope gets its own event id and
is gzipped up front, so the load generator spends no CPU on encoding.
"""

from __future__ import annotations

import functools
import gzip
import multiprocessing
import random
import statistics
import time
import uuid
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

SIGNATURES = 1000
USERS = 5000
TEMPLATES_PER_SIGNATURE = 3
GZIP_LEVEL = 6  # zlib's default, what most SDK transports use

Event = dict[str, Any]


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_WORDS = _words(
    "order cart user account invoice payment item price total session token cache queue "
    "request response client server record batch entry report export import config "
    "setting profile address shipment product stock coupon discount tax refund customer "
    "tenant"
)
_VERBS = _words("get load fetch save update create delete apply build parse validate sync")
_EXC = {
    "python": _words(
        "ValueError KeyError TypeError AttributeError IntegrityError TimeoutError "
        "PermissionError RuntimeError ZeroDivisionError ConnectionError"
    ),
    "node": _words(
        "TypeError RangeError ReferenceError Error SyntaxError FetchError ValidationError "
        "NotFoundError"
    ),
    "java": _words(
        "java.lang.NullPointerException java.lang.IllegalStateException "
        "java.lang.IllegalArgumentException java.util.NoSuchElementException "
        "java.io.IOException org.hibernate.LazyInitializationException"
    ),
}
_LIBS = {
    "python": [
        ("django.core.handlers.exception", "inner"),
        ("django.core.handlers.base", "_get_response"),
        ("django.views.generic.base", "view"),
        ("django.views.generic.base", "dispatch"),
        ("django.db.models.query", "get"),
        ("django.db.models.query", "__iter__"),
        ("django.db.backends.utils", "execute"),
        ("sentry_sdk.integrations.django", "sentry_wrapped_callback"),
        ("celery.app.trace", "trace_task"),
        ("requests.sessions", "request"),
    ],
    "node": [
        ("express.lib.router.layer", "Layer.handle [as handle_request]"),
        ("express.lib.router.index", "next"),
        ("express.lib.router.route", "Route.dispatch"),
        ("node:internal.process.task_queues", "processTicksAndRejections"),
        ("pg.lib.client", "Client._handleErrorMessage"),
        ("axios.lib.core.Axios", "Axios.request"),
    ],
    "java": [
        ("org.springframework.web.servlet.FrameworkServlet", "service"),
        ("org.springframework.web.servlet.DispatcherServlet", "doDispatch"),
        ("org.apache.catalina.core.ApplicationFilterChain", "doFilter"),
        ("org.hibernate.internal.SessionImpl", "load"),
        ("jdk.internal.reflect.NativeMethodAccessorImpl", "invoke0"),
        ("java.lang.reflect.Method", "invoke"),
    ],
}
_PLATFORMS = ("python", "python", "python", "python", "node", "node", "node", "java", "java")
_SDKS = {
    "python": ("sentry.python.django", "2.75.0"),
    "node": ("sentry.javascript.node", "9.40.0"),
    "java": ("sentry.java.spring-boot.jakarta", "8.20.0"),
}
_UAS = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/18.1 Safari/605.1.15",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "okhttp/4.12.0",
    "python-requests/2.32.3",
)


@dataclass(frozen=True)
class Signature:
    platform: str
    exc_type: str
    in_app: tuple[tuple[str, str], ...]  # (module, function), oldest first


@dataclass
class Corpus:
    """Pre-encoded envelope bodies (gzip) and their event ids, plus size statistics."""

    bodies: list[bytes]
    event_ids: list[str]
    raw_sizes: list[int]  # uncompressed event JSON bytes

    def stats(self) -> dict[str, float]:
        raw, packed = self.raw_sizes, [len(b) for b in self.bodies]
        cuts = statistics.quantiles(raw, n=4)
        return {
            "envelopes": len(self.bodies),
            "event_bytes_mean": statistics.fmean(raw),
            "event_bytes_min": min(raw),
            "event_bytes_q1": cuts[0],
            "event_bytes_median": cuts[1],
            "event_bytes_q3": cuts[2],
            "event_bytes_max": max(raw),
            "gzip_bytes_mean": statistics.fmean(packed),
        }


def _ident(rng: random.Random) -> str:
    return f"{rng.choice(_VERBS)}_{rng.choice(_WORDS)}"


def make_signatures(count: int, seed: int) -> list[Signature]:
    """``count`` stack traces that group apart: distinct in-app chains and types."""
    rng = random.Random(seed)
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    out: list[Signature] = []
    while len(out) < count:
        platform = rng.choice(_PLATFORMS)
        chain = tuple(_in_app_frame(rng, platform) for _ in range(rng.randint(2, 6)))
        exc_type = rng.choice(_EXC[platform])
        if (exc_type, chain) not in seen:
            seen.add((exc_type, chain))
            out.append(Signature(platform, exc_type, chain))
    return out


def _in_app_frame(rng: random.Random, platform: str) -> tuple[str, str]:
    area, noun = rng.choice(("views", "services", "models", "tasks", "api")), rng.choice(_WORDS)
    if platform == "java":
        cls = f"{noun.capitalize()}{area.capitalize()[:-1]}"
        return f"com.acme.shop.{area}.{cls}", f"{rng.choice(_VERBS)}{noun.capitalize()}"
    if platform == "node":
        return f"{area}.{noun}", f"{noun.capitalize()}Handler.{rng.choice(_VERBS)}"
    return f"acme.{area}.{noun}", _ident(rng)


def _code_line(rng: random.Random) -> str:
    a, b, c = rng.choice(_WORDS), rng.choice(_WORDS), rng.choice(_VERBS)
    return rng.choice(
        (
            f"    {a} = self.{c}_{b}({a}_id, strict={rng.random() < 0.5})",
            f"    if not {a}.{b}s:",
            f"        raise {b.capitalize()}Error(f'{a} {{{a}.id}} has no {b}')",
            f"    for {b} in {a}.{b}s.filter(active=True):",
            f"    return {{'{a}': {a}.id, '{b}': {b}.{c}(), 'total': {rng.randint(0, 999)}}}",
            f"    logger.info('{c} {a} %s', {a}.pk)",
            f"    {a}_{b} = await {b}Repository.{c}({a}.id);",
            f"    {b.capitalize()} {a} = {a}Service.{c}{b.capitalize()}(request.getId());",
        )
    )


@dataclass(frozen=True)
class _Pools:
    """Text drawn from once per frame: consecutive source lines, variable sets, filler."""

    source: list[str]
    variables: list[Event]
    filler: str

    @classmethod
    def make(cls, seed: int) -> _Pools:
        rng = random.Random(seed)
        source = [_code_line(rng) for _ in range(4000)]
        variables = [_frame_vars(rng) for _ in range(2000)]
        filler = " ".join(rng.choice(_WORDS) + str(rng.randint(0, 99)) for _ in range(8000))
        return cls(source, variables, filler)


def _frame(
    rng: random.Random, pools: _Pools, platform: str, module: str, function: str, in_app: bool
) -> Event:
    path = module.replace(".", "/")
    ext = {"python": "py", "node": "js", "java": "java"}[platform]
    root = {"python": "/srv/app/", "node": "/srv/app/dist/", "java": ""}[platform]
    filename = f"{path.rsplit('/', 1)[-1]}.java" if platform == "java" else f"{path}.{ext}"
    frame: Event = {
        "filename": filename,
        "abs_path": f"{root}{filename}" if root else filename,
        "function": function,
        "module": module,
        "lineno": rng.randint(10, 900),
        "in_app": in_app,
    }
    if platform != "java":
        at = rng.randrange(len(pools.source) - 11)
        frame["pre_context"] = pools.source[at : at + 5]
        frame["context_line"] = pools.source[at + 5]
        frame["post_context"] = pools.source[at + 6 : at + 11]
    if platform == "python":
        frame["vars"] = dict(rng.choice(pools.variables))
    return frame


def _frame_vars(rng: random.Random) -> Event:
    out: Event = {}
    for _ in range(rng.randint(2, 7)):
        name = rng.choice(_WORDS)
        out[name] = rng.choice(
            (
                f"<{name.capitalize()} id={rng.randint(1, 10**6)} status='{rng.choice(_VERBS)}'>",
                str(rng.randint(0, 10**9)),
                f"'{uuid.UUID(int=rng.getrandbits(128))}'",
                repr({w: rng.randint(0, 100) for w in rng.sample(_WORDS, 3)}),
                "None",
            )
        )
    return out


def _breadcrumb(rng: random.Random, ts: float) -> Event:
    kind = rng.random()
    if kind < 0.4:
        table, col = rng.choice(_WORDS), rng.choice(_WORDS)
        return {
            "type": "default",
            "category": "query",
            "timestamp": ts,
            "message": f'SELECT "{table}"."id", "{table}"."{col}" FROM "{table}" '
            f'WHERE "{table}"."{col}_id" = %s LIMIT {rng.randint(1, 100)}',
        }
    if kind < 0.7:
        return {
            "type": "http",
            "category": "httplib",
            "timestamp": ts,
            "data": {
                "url": f"https://api.internal/{rng.choice(_WORDS)}/{rng.randint(1, 99999)}",
                "method": rng.choice(("GET", "POST", "PUT")),
                "status_code": rng.choice((200, 200, 201, 404, 500)),
                "reason": "OK",
            },
        }
    return {
        "type": "default",
        "category": rng.choice(("app", "django.security", "console")),
        "level": rng.choice(("info", "warning")),
        "timestamp": ts,
        "message": f"{_ident(rng)} finished for {rng.choice(_WORDS)} {rng.randint(1, 10**5)}",
    }


def _request(rng: random.Random) -> Event:
    route = f"/{rng.choice(_WORDS)}s/{rng.randint(1, 10**5)}/{rng.choice(_VERBS)}"
    return {
        "url": f"https://shop.example.com{route}",
        "method": rng.choice(("GET", "POST")),
        "query_string": f"page={rng.randint(1, 50)}&sort={rng.choice(_WORDS)}",
        "headers": {
            "Host": "shop.example.com",
            "User-Agent": rng.choice(_UAS),
            "Accept": "application/json, text/plain, */*",
            "Accept-Language": "en-US,en;q=0.9",
            "Cookie": f"sessionid={uuid.UUID(int=rng.getrandbits(128)).hex}; theme=dark",
            "X-Request-Id": str(uuid.UUID(int=rng.getrandbits(128))),
            "X-Forwarded-For": f"203.0.113.{rng.randint(1, 254)}",
        },
        "env": {"SERVER_NAME": "web-1", "SERVER_PORT": "8000"},
    }


def make_template(sig: Signature, rng: random.Random, pools: _Pools, target: int) -> Event:
    """One event of ``sig`` whose encoded size is close to ``target`` bytes."""
    frames = _frames(sig, rng, pools)
    exception: Event = {
        "type": sig.exc_type,
        "value": f"{_ident(rng)} failed: {rng.choice(_WORDS)}",
        "mechanism": {"type": "generic", "handled": rng.random() < 0.7},
        "stacktrace": {"frames": frames},
    }
    event: Event = {
        "level": "error",
        "platform": sig.platform,
        "logger": sig.in_app[-1][0],
        "server_name": f"web-{rng.randint(1, 8)}",
        "release": f"shop@1.{rng.randint(0, 3)}.{rng.randint(0, 9)}",
        "environment": rng.choice(("production", "production", "staging")),
        "transaction": sig.in_app[0][0],
        "exception": {"values": [exception]},
        "breadcrumbs": {"values": []},
        "tags": {"region": rng.choice(("eu-west-1", "us-east-1")), "shard": str(rng.randint(1, 9))},
        "contexts": _contexts(sig.platform, rng),
        "request": _request(rng),
        "sdk": {"name": _SDKS[sig.platform][0], "version": _SDKS[sig.platform][1]},
        "extra": {},
    }
    _fit(event, rng, pools, target)
    return event


def _frames(sig: Signature, rng: random.Random, pools: _Pools) -> list[Event]:
    """10-40 frames: library frames around the signature's in-app chain, oldest first."""
    total = rng.randint(10, 40)
    libs = _LIBS[sig.platform]
    lib_frames = [rng.choice(libs) for _ in range(total - len(sig.in_app))]
    split = len(lib_frames) * 2 // 3
    out = [_frame(rng, pools, sig.platform, m, f, False) for m, f in lib_frames[:split]]
    out += [_frame(rng, pools, sig.platform, m, f, True) for m, f in sig.in_app]
    out += [_frame(rng, pools, sig.platform, m, f, False) for m, f in lib_frames[split:]]
    return out


def _contexts(platform: str, rng: random.Random) -> Event:
    runtime = {
        "python": ("CPython", "3.12.7"),
        "node": ("node", "v22.11.0"),
        "java": ("java", "21"),
    }
    name, version = runtime[platform]
    return {
        "runtime": {"name": name, "version": version},
        "os": {"name": "Linux", "version": f"6.{rng.randint(1, 11)}.0", "kernel_version": "6.8"},
        "device": {"arch": "x86_64", "memory_size": 8 * 2**30, "processor_count": 4},
        "trace": {"trace_id": uuid.UUID(int=rng.getrandbits(128)).hex, "op": "http.server"},
    }


def _size(event: Event) -> int:
    return len(orjson.dumps(event))


def _fit(event: Event, rng: random.Random, pools: _Pools, target: int) -> None:
    """Add 10-30 breadcrumbs, shrink the event towards ``target``, then pad ``extra`` to it.

    Shrinking strips library frames' variables and context, breadcrumbs down to 10,
    library frames down to 10 frames in all, then in-app variables and context. Sizes are
    tracked by the encoded size of what is removed, so the event is encoded only twice.
    """
    crumbs = event["breadcrumbs"]["values"]
    base_ts = round(time.time() - 60, 3)
    crumbs.extend(_breadcrumb(rng, base_ts + i * 0.25) for i in range(rng.randint(10, 30)))
    frames: list[Event] = event["exception"]["values"][0]["stacktrace"]["frames"]
    size = _size(event)
    for in_app in (False, True):
        for key in ("vars", "pre_context", "post_context"):
            for frame in frames:
                if size > target and frame["in_app"] is in_app and key in frame:
                    size -= len(orjson.dumps({key: frame.pop(key)}))
        while not in_app and size > target and len(crumbs) > 10:
            size -= len(orjson.dumps(crumbs.pop())) + 1
        while not in_app and size > target and len(frames) > 10:
            lib = next(i for i, f in enumerate(frames) if not f["in_app"])
            size -= len(orjson.dumps(frames.pop(lib))) + 1
    gap = target - _size(event) - len(',"task_args":""')
    if gap > 0:
        at = rng.randrange(len(pools.filler) - gap)
        event["extra"]["task_args"] = pools.filler[at : at + gap]


def build(
    count: int, *, seed: int = 7, min_bytes: int = 5000, max_bytes: int = 20000, processes: int = 2
) -> Corpus:
    """``count`` gzip envelopes, each with a fresh event id (uuid4: unique across runs) and
    a user from the pool; the content is a function of ``seed`` alone."""
    chunks = [
        (seed, start, min(start + CHUNK, count), min_bytes, max_bytes)
        for start in range(0, count, CHUNK)
    ]
    corpus = Corpus([], [], [])
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(processes, mp_context=context) as pool:
        for part in pool.map(_build_chunk, chunks):
            corpus.bodies += part.bodies
            corpus.event_ids += part.event_ids
            corpus.raw_sizes += part.raw_sizes
    return corpus


CHUNK = 2000


@functools.cache
def _templates(seed: int, min_bytes: int, max_bytes: int) -> list[Event]:
    pools = _Pools.make(seed)
    rng = random.Random(seed + 1)
    return [
        make_template(sig, rng, pools, rng.randint(min_bytes, max_bytes))
        for sig in make_signatures(SIGNATURES, seed)
        for _ in range(TEMPLATES_PER_SIGNATURE)
    ]


def _build_chunk(job: tuple[int, int, int, int, int]) -> Corpus:
    seed, start, stop, min_bytes, max_bytes = job
    templates = _templates(seed, min_bytes, max_bytes)
    rng = random.Random(seed * 1_000_003 + start)
    out = Corpus([], [], [])
    now = time.time()
    for _ in range(start, stop):
        event_id = uuid.uuid4().hex
        event = dict(rng.choice(templates))
        event["event_id"] = event_id
        event["timestamp"] = datetime.fromtimestamp(now - rng.random(), UTC).isoformat()
        event["user"] = _user(rng.randrange(USERS))
        payload = orjson.dumps(event)
        out.bodies.append(gzip.compress(_envelope(event_id, payload), GZIP_LEVEL, mtime=0))
        out.event_ids.append(event_id)
        out.raw_sizes.append(len(payload))
    return out


def _user(i: int) -> Event:
    return {
        "id": str(100_000 + i),
        "email": f"user{i}@example.com",
        "ip_address": f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}",
    }


def _envelope(event_id: str, payload: bytes) -> bytes:
    header = orjson.dumps({"event_id": event_id})
    item = orjson.dumps({"type": "event", "length": len(payload)})
    return header + b"\n" + item + b"\n" + payload + b"\n"
