"""Run the real-SDK programs against the capture server, check them, save samples.

    python tests/sdk/run_programs.py [--only ID_OR_LANG ...] [--save] [--negative] [--prefix]

Reads .cache/sdk/manifest.json (written by scripts/install-sdks.sh). For each
program it starts tests/sdk/capture_server.py on a free loopback port, runs the
program with SENTRY_DSN pointing at it (TRACEBOX_REPEAT=2 by default) and checks:

  * exit code 0;
  * every ``event_id=`` the program printed arrived (store body or envelope);
  * TRACEBOX_REPEAT exception events and one message event were printed;
  * a session / sessions item arrived when the program says it sends sessions;
  * every request hit /api/42/store/ or /api/42/envelope/.

--save      writes every captured request to tests/samples/<id>/NN-<endpoint>.json
--negative  also proves the exit code is honest: the run must FAIL (non-zero)
            when the server answers 500, and when nothing listens on the port
--prefix    also runs once with a DSN path prefix (/api/v4/error_tracking/collector)
            and checks that every request kept it

Only the standard library is used. Exit status 0 iff every check passed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from capture_server import PUBLIC_KEY, CapturedRequest, CaptureServer

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MANIFEST = (
    Path(os.environ.get("TRACEBOX_SDK_CACHE") or ROOT / ".cache" / "sdk") / "manifest.json"
)
SAMPLES = ROOT / "tests" / "samples"
PREFIX = "/api/v4/error_tracking/collector"
TIMEOUT = 180


def decode_body(req: CapturedRequest) -> bytes:
    enc = (req.header("Content-Encoding") or "").strip().lower()
    if enc in ("gzip", "x-gzip"):
        return gzip.decompress(req.body)
    if enc == "deflate":
        try:
            return zlib.decompress(req.body)
        except zlib.error:
            return zlib.decompress(req.body, -15)
    return req.body


def parse_envelope(data: bytes) -> tuple[dict[str, Any], list[tuple[dict[str, Any], bytes]]]:
    """Minimal envelope parser (length optional, trailing newline optional)."""
    nl = data.find(b"\n")
    header = json.loads(data[: nl if nl >= 0 else len(data)] or b"{}")
    pos = nl + 1 if nl >= 0 else len(data)
    items = []
    while pos < len(data):
        nl = data.find(b"\n", pos)
        if nl < 0:
            nl = len(data)
        line = data[pos:nl]
        if not line.strip():
            pos = nl + 1
            continue
        ih = json.loads(line)
        pos = nl + 1
        if "length" in ih:
            payload = data[pos : pos + int(ih["length"])]
            pos += int(ih["length"]) + 1
        else:
            end = data.find(b"\n", pos)
            end = len(data) if end < 0 else end
            payload = data[pos:end]
            pos = end + 1
        items.append((ih, payload))
    return header, items


def summarize(req: CapturedRequest) -> dict[str, Any]:
    body = decode_body(req)
    out: dict[str, Any] = {"endpoint": req.endpoint, "event_ids": set(), "items": []}
    if req.endpoint == "store":
        ev = json.loads(body)
        out["event_ids"].add(str(ev.get("event_id", "")).replace("-", ""))
        out["items"].append("event(store)")
    elif req.endpoint == "envelope":
        header, items = parse_envelope(body)
        if header.get("event_id"):
            out["event_ids"].add(str(header["event_id"]).replace("-", ""))
        for ih, payload in items:
            out["items"].append(ih.get("type"))
            if ih.get("type") in ("event", "transaction"):
                try:
                    eid = json.loads(payload).get("event_id")
                except ValueError:
                    eid = None
                if eid:
                    out["event_ids"].add(str(eid).replace("-", ""))
    return out


def auth_style(req: CapturedRequest) -> str:
    styles = []
    if req.header("X-Sentry-Auth"):
        styles.append("X-Sentry-Auth")
    if req.header("Authorization"):
        styles.append("Authorization")
    if "sentry_key=" in req.path:
        styles.append("query")
    try:
        body = decode_body(req)
        if req.endpoint == "envelope" and b'"dsn"' in body.split(b"\n", 1)[0]:
            styles.append("envelope-dsn")
    except (OSError, zlib.error, EOFError):
        pass
    return "+".join(styles) or "none"


def free_closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run_program(prog: dict[str, Any], dsn: str, repeat: int) -> tuple[int, str, str, float]:
    env = dict(os.environ)
    env.update(prog.get("env", {}))
    env.update(
        SENTRY_DSN=dsn,
        TRACEBOX_RELEASE="sdk-test@1.0.0",
        TRACEBOX_ENV="test",
        TRACEBOX_REPEAT=str(repeat),
    )
    env.pop("TRACEBOX_SDK_DEBUG", None)
    t0 = time.monotonic()
    try:
        p = subprocess.run(
            prog["cmd"],
            cwd=prog.get("cwd", ROOT),
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = (
            -999,
            (exc.stdout or b"").decode(errors="replace")
            if isinstance(exc.stdout, bytes)
            else (exc.stdout or ""),
            "timeout",
        )
    return rc, out, err, time.monotonic() - t0


def parse_stdout(out: str) -> tuple[list[tuple[str, str]], int]:
    events: list[tuple[str, str]] = []
    sessions = 0
    kind = None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("kind="):
            kind = line[5:]
            if kind == "session":
                sessions += 1
        elif line.startswith("event_id="):
            events.append((kind or "?", line[9:]))
    return events, sessions


def check_success(
    prog: dict[str, Any], repeat: int, save: bool, prefix: str = ""
) -> dict[str, Any]:
    res: dict[str, Any] = {"id": prog["id"], "problems": []}
    with CaptureServer() as srv:
        dsn = srv.dsn(prefix=prefix)
        rc, out, err, dur = run_program(prog, dsn, repeat)
        time.sleep(0.3)  # let late requests (if any) land
        reqs = srv.requests
    res.update(rc=rc, seconds=round(dur, 1), requests=len(reqs))
    probs = res["problems"]
    if rc != 0:
        probs.append(f"exit code {rc}; stderr tail: {err.strip()[-600:]}")
    events, sessions_printed = parse_stdout(out)
    for _, eid in events:
        if not re.fullmatch(r"[0-9a-f]{32}", eid):
            probs.append(f"bad event id printed: {eid!r}")
    n_exc = sum(1 for k, _ in events if k == "exception")
    n_msg = sum(1 for k, _ in events if k == "message")
    if n_exc != repeat or n_msg != 1:
        probs.append(f"printed {n_exc} exception / {n_msg} message ids, expected {repeat} / 1")
    seen_ids: set[str] = set()
    items: list[str] = []
    endpoints, encodings, auths, ctypes = set(), set(), set(), set()
    for r in reqs:
        if r.endpoint is None:
            probs.append(f"non-ingest request {r.method} {r.path}")
            continue
        if prefix and not r.path.startswith(prefix + "/api/"):
            probs.append(f"DSN prefix lost: {r.path}")
        s = summarize(r)
        seen_ids |= s["event_ids"]
        items += [str(i) for i in s["items"]]
        endpoints.add(r.endpoint)
        encodings.add(
            repr(r.header("Content-Encoding"))
            if r.header("Content-Encoding") is not None
            else "absent"
        )
        ctypes.add(r.header("Content-Type") or "absent")
        auths.add(auth_style(r))
    for kind, eid in events:
        if eid not in seen_ids:
            probs.append(f"{kind} event {eid} printed but not received")
    has_session = any(i in ("session", "sessions") for i in items)
    if "session" in prog.get("kinds", []) and not has_session:
        probs.append("no session/sessions item received")
    if sessions_printed and not has_session:
        probs.append("program printed kind=session but none arrived")
    res.update(
        endpoints=sorted(endpoints),
        content_encoding=sorted(encodings),
        content_type=sorted(ctypes),
        auth=sorted(auths),
        items=sorted(set(items)),
        item_counts={i: items.count(i) for i in sorted(set(items))},
        chunked=any(r.chunked for r in reqs),
        sessions=has_session,
    )
    if save and not prefix:
        dest = SAMPLES / prog["id"]
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        for n, r in enumerate(reqs, 1):
            doc = r.to_json()
            doc = {
                "program": prog["id"],
                "sdk": prog["sdk_name"],
                "sdk_version": prog["version"],
                "replay": bool(prog.get("replay")),
                "seq": n,
                "dsn": dsn,
                "public_key": PUBLIC_KEY,
                "run_env": {
                    "TRACEBOX_REPEAT": str(repeat),
                    "TRACEBOX_RELEASE": "sdk-test@1.0.0",
                    "TRACEBOX_ENV": "test",
                },
                **doc,
            }
            (dest / f"{n:02d}-{r.endpoint or 'other'}.json").write_text(
                json.dumps(doc, indent=2) + "\n"
            )
        (dest / "stdout.txt").write_text(out)
    return res


def check_failure(prog: dict[str, Any], mode: str) -> dict[str, Any]:
    if mode == "500":
        with CaptureServer(status=500) as srv:
            rc, _out, err, dur = run_program(prog, srv.dsn(), 1)
            n = len(srv.requests)
    else:
        port = free_closed_port()
        rc, _out, err, dur = run_program(prog, f"http://{PUBLIC_KEY}@127.0.0.1:{port}/42", 1)
        n = 0
    ok = rc not in (0, -999)
    return {
        "id": prog["id"],
        "mode": mode,
        "rc": rc,
        "ok": ok,
        "requests": n,
        "seconds": round(dur, 1),
        "stderr_tail": err.strip().splitlines()[-1:] if err.strip() else [],
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    ap.add_argument("--only", nargs="*", default=[], help="program ids or languages")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--save", action="store_true")
    ap.add_argument("--negative", action="store_true")
    ap.add_argument("--prefix", action="store_true")
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args()

    manifest = json.loads(args.manifest.read_text())
    progs = [
        p
        for p in manifest["programs"]
        if not args.only or p["id"] in args.only or p["language"] in args.only
    ]
    failed = 0
    results: dict[str, Any] = {"success": [], "prefix": [], "negative": []}
    for prog in progs:
        if not prog.get("installed"):
            print(
                f"SKIP {prog['id']}: not installed (run scripts/install-sdks.sh {prog['language']})"
            )
            failed += 1
            continue
        r = check_success(prog, args.repeat, args.save)
        results["success"].append(r)
        status = "PASS" if not r["problems"] else "FAIL"
        failed += bool(r["problems"])
        print(
            f"{status} {r['id']:<18} rc={r['rc']} {r['seconds']:>5}s reqs={r['requests']} "
            f"endpoints={','.join(r['endpoints'])} enc={','.join(r['content_encoding'])} "
            f"auth={','.join(r['auth'])} items={r['item_counts']} chunked={r['chunked']}"
        )
        for p in r["problems"]:
            print(f"     - {p}")
        if args.prefix:
            pr = check_success(prog, 1, False, prefix=PREFIX)
            results["prefix"].append(pr)
            failed += bool(pr["problems"])
            print(
                f"{'PASS' if not pr['problems'] else 'FAIL'} {pr['id']:<18} (DSN prefix {PREFIX})"
            )
            for p in pr["problems"]:
                print(f"     - {p}")
        if args.negative:
            for mode in ("500", "down"):
                nr = check_failure(prog, mode)
                results["negative"].append(nr)
                failed += not nr["ok"]
                print(
                    f"{'PASS' if nr['ok'] else 'FAIL'} {nr['id']:<18} server {mode}: rc={nr['rc']} "
                    f"({nr['seconds']}s, {nr['requests']} reqs) {' '.join(nr['stderr_tail'])[:150]}"
                )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=sorted) + "\n")
    print(
        f"{len(progs) - failed} passed, {failed} failed"
        if not (args.negative or args.prefix)
        else f"programs: {len(progs)}, failed checks: {failed}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
