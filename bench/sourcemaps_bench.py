"""Symbolication benchmark: digest events/s with and without source maps, ~1 MB bundle.

Generates a JavaScript app of 600 modules, bundles and minifies it with esbuild (from
``scripts/install-sdks.sh sourcemaps``) into a ~1.2 MB bundle with a ~3.9 MB map,
stores both as sentry-cli would (an artifact bundle with a debug ID) in a fresh SQLite
database, then digests the same JavaScript events (10 minified frames each, spread over
the bundle) three ways, each through ``Preparer.prepare`` and the batch write:

- ``no symbolicator``: the digest as before source maps;
- ``no artifacts``: the symbolicator runs, the project has no artifacts (every frame
  gets its "no artifact" explanation);
- ``mapped``: every frame mapped with the uploaded map (parsed once, then cached).

Also prints the one-time parse of the map and, for comparison, the parse of the same
map by the pure-Python ``sourcemap`` package when it is installed (docs/design.md).
Not a test: run it by hand, e.g.

    .venv/bin/python bench/sourcemaps_bench.py --events 2000
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import random
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import orjson

from tracebox.digest.prepare import Preparer
from tracebox.spool.record import RecordKind, SpoolRecord
from tracebox.store import Database, artifacts, projects
from tracebox.store import digest as store_digest
from tracebox.symbolication import MapCache, StoreArtifacts, Symbolicator
from tracebox.symbolication.cache import parse
from tracebox.symbolication.uploads import UploadLimits, assemble

ROOT = Path(__file__).resolve().parents[1]
MODULES = 600
FRAMES_PER_EVENT = 10
DEBUG_ID = "6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"
URL = "https://shop.example/static/app.min.js"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=2000, help="events digested per variant")
    p.add_argument("--batch", type=int, default=500, help="events per digest batch")
    return p.parse_args()


def build(work: Path) -> tuple[bytes, bytes]:
    """The app's minified bundle and source map, made by esbuild."""
    esbuild = Path(os.environ.get("TRACEBOX_SDK_CACHE", ROOT / ".cache" / "sdk"))
    esbuild = esbuild / "sourcemaps-app" / "node_modules" / ".bin" / "esbuild"
    if not esbuild.exists():
        raise SystemExit(f"{esbuild} is missing: run scripts/install-sdks.sh sourcemaps")
    src = work / "src"
    src.mkdir()
    rng = random.Random(1)
    for i in range(MODULES):
        body = [f"import {{ helper{(i + 1) % MODULES} }} from './m{(i + 1) % MODULES}.js';"]
        for j in range(8):
            k = rng.randrange(2, 9)
            body.append(
                f"export function fn{i}_{j}(input, options) {{\n"
                "  const values = [];\n"
                "  for (let k = 0; k < input.length; k++) {\n"
                f"    if (input[k] % {k} === 0) values.push(input[k] * {i});\n"
                f"    else values.push(String(input[k]).padStart({j + 3}, '0'));\n"
                "  }\n"
                f"  if (options && options.strict && values.length > {i + 10}) {{\n"
                f"    throw new Error('too many values in fn{i}_{j}: ' + values.length);\n"
                "  }\n"
                "  return values.join(',');\n"
                "}"
            )
        body.append(f"export function helper{i}(x) {{ return fn{i}_0([x], {{ strict: true }}); }}")
        (src / f"m{i}.js").write_text("\n".join(body) + "\n")
    entry = [f"import * as m{i} from './m{i}.js';" for i in range(MODULES)]
    entry.append("globalThis.all = [" + ", ".join(f"m{i}" for i in range(MODULES)) + "];")
    (src / "main.js").write_text("\n".join(entry) + "\n")
    out = work / "dist" / "app.min.js"
    subprocess.run(
        [
            str(esbuild),
            "src/main.js",
            "--bundle",
            "--minify",
            "--sourcemap",
            f"--outfile={out}",
            "--log-level=warning",
        ],
        cwd=work,
        check=True,
    )
    return out.read_bytes(), out.with_suffix(".js.map").read_bytes()


def bundle(minified: bytes, source_map: bytes) -> bytes:
    """An artifact bundle as sentry-cli uploads it."""
    data = io.BytesIO()
    data.write(b"SYSB\x02\x00\x00\x00")
    with zipfile.ZipFile(data, "a", zipfile.ZIP_DEFLATED) as z:
        z.writestr("files/_/_/app.min.js", minified)
        z.writestr("files/_/_/app.min.js.map", source_map)
        headers = {"debug-id": DEBUG_ID, "sourcemap": "app.min.js.map"}
        files = {
            "files/_/_/app.min.js": {
                "type": "minified_source",
                "url": "~/static/app.min.js",
                "headers": headers,
            },
            "files/_/_/app.min.js.map": {
                "type": "source_map",
                "url": "~/static/app.min.js.map",
                "headers": {"debug-id": DEBUG_ID},
            },
        }
        z.writestr("manifest.json", json.dumps({"files": files, "org": "acme"}))
    return data.getvalue()


def events(minified: bytes, n: int) -> list[dict[str, Any]]:
    """JavaScript events whose frames point at `throw` statements across the bundle."""
    line = minified.split(b"\n", 1)[0].decode()
    throws = [i + 1 for i in range(len(line)) if line.startswith("throw ", i)]
    rng = random.Random(2)
    found = []
    for e in range(n):
        frames = [
            {
                "filename": URL,
                "abs_path": URL,
                "function": "x",
                "lineno": 1,
                "colno": rng.choice(throws),
                "in_app": True,
            }
            for _ in range(FRAMES_PER_EVENT)
        ]
        found.append(
            {
                "event_id": f"{e:032x}",
                "timestamp": time.time(),
                "received": time.time(),
                "platform": "javascript",
                "level": "error",
                "environment": "production",
                "tags": [],
                "release": "shop@1",
                "exception": {
                    "values": [
                        {
                            "type": "Error",
                            "value": f"too many values {e % 50}",
                            "stacktrace": {"frames": frames},
                        }
                    ]
                },
                "debug_meta": {
                    "images": [{"type": "sourcemap", "code_file": URL, "debug_id": DEBUG_ID}]
                },
            }
        )
    return found


def digest(
    db: Database, preparer: Preparer, project_id: int, evs: list[dict[str, Any]], batch: int
) -> tuple[float, float]:
    """Events/s through the digest's prepare step and the batch write: by the wall clock,
    and by this process's CPU time (the machine is shared, so both are printed)."""
    records = [
        SpoolRecord(
            RecordKind.EVENT, project_id, 1, time.time(), orjson.dumps(e), event_id=e["event_id"]
        ).encode()
        for e in evs
    ]
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(records), batch):
        prepared = preparer.prepare(records[i : i + batch])
        with db.write() as conn:
            store_digest.write_events(conn, prepared.events)
    n = len(records)
    return n / (time.perf_counter() - wall), n / (time.process_time() - cpu)


def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        minified, source_map = build(work)
        db = Database(f"sqlite:///{work / 'bench.sqlite3'}")
        db.migrate()
        with db.write() as conn:
            mapped_project = projects.create(conn, "acme/mapped", "mapped").id
            bare_projects = [projects.create(conn, f"acme/bare{i}", "bare").id for i in range(2)]
            data = bundle(minified, source_map)
            chunk = artifacts.save_chunk(conn, data, now=time.time())
        with db.read() as conn:
            mapped = projects.get(conn, mapped_project)
        assert mapped is not None
        result = assemble(
            db,
            UploadLimits(10**9, 10**10),
            [mapped],
            checksum=chunk,
            chunks=[chunk],
            release="shop@1",
            dist="",
            now=time.time(),
        )
        assert result.state == "ok", result.detail

        t, c = time.perf_counter(), time.process_time()
        parsed = parse(minified, source_map)
        parse_ms = (time.perf_counter() - t) * 1000
        parse_cpu_ms = (time.process_time() - c) * 1000
        assert parsed.error is None
        print(
            f"bundle {len(minified) / 1e6:.2f} MB, map {len(source_map) / 1e6:.2f} MB; "
            f"symbolic parse {parse_ms:.0f} ms wall, {parse_cpu_ms:.0f} ms CPU "
            "(once per map and process)"
        )
        try:
            import sourcemap  # type: ignore[import-not-found]

            t, c = time.perf_counter(), time.process_time()
            sourcemap.loads(source_map.decode())
            wall_ms = (time.perf_counter() - t) * 1000
            cpu_ms = (time.process_time() - c) * 1000
            print(f"pure-Python sourcemap 0.2.1 parse {wall_ms:.0f} ms wall, {cpu_ms:.0f} ms CPU")
        except ImportError:
            print("pure-Python sourcemap not installed (pip install sourcemap==0.2.1 to compare)")

        n, batch = args.events, args.batch
        plain = digest(db, Preparer(), bare_projects[0], events(minified, n), batch)
        symbolicator = Symbolicator(StoreArtifacts(db), MapCache(512 * 1024 * 1024))
        nothing = digest(
            db, Preparer(symbolicator=symbolicator), bare_projects[1], events(minified, n), batch
        )
        warm = Symbolicator(StoreArtifacts(db), MapCache(512 * 1024 * 1024))
        mapped_rate = digest(
            db, Preparer(symbolicator=warm), mapped_project, events(minified, n), batch
        )
        assert warm.cache.parses == 1, warm.cache.parses
        print(
            f"machine: {platform.node()} {os.cpu_count()} CPUs, Python {platform.python_version()}"
        )
        print(f"{n} events x {FRAMES_PER_EVENT} frames, batches of {batch}, SQLite")
        print("                        events/s (wall)  events/s (CPU of this process)")
        for name, (by_wall, by_cpu) in (
            ("no symbolicator", plain),
            ("JS, no artifacts", nothing),
            ("JS, mapped (cached)", mapped_rate),
        ):
            print(f"  {name:22s}{by_wall:10.0f}{by_cpu:18.0f}")
        print(f"maps parsed while mapping {n} events: {warm.cache.parses}")
        db.dispose()


if __name__ == "__main__":
    main()
