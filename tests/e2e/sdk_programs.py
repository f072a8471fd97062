"""The real-SDK programs of issue 12 and how to run them: sentry-python 2.x (the one
Tracebox depends on, so always installed), sentry-go 0.50's slog handler, the sentry
crate's panic integration, @sentry/node's logger (built by ``scripts/install-sdks.sh go
rust node``, which ``make test`` runs; their tests skip until then) and @sentry/browser's
sessions, bundled with the source maps toolchain (``scripts/install-sdks.sh sourcemaps``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers import SDK_CACHE, missing
from tests.sourcemaps import toolchain

ROOT = Path(__file__).resolve().parents[2]
CACHE = SDK_CACHE
PYTHON_SDK_DATA = [sys.executable, str(ROOT / "tests" / "e2e" / "programs" / "python_sdk_data.py")]
GO_SLOG = CACHE / "bin" / "go-0.50.0-slog"
RUST_PANIC = CACHE / "rust-target" / "debug" / "tracebox-sdk-test-rust-panic"
NODE_MODULES = CACHE / "node-11.12.0" / "node_modules"
NODE_LOGS = ["node", str(ROOT / "tests" / "sdk" / "node" / "11.12.0" / "logs.js")]
BROWSER_SESSION = ROOT / "tests" / "e2e" / "programs" / "browser_session"


def installed(program: Path, langs: str) -> list[str]:
    if not program.exists():
        missing(f"{program.name} is not built: run scripts/install-sdks.sh {langs}")
    return [str(program)]


def node_logs() -> list[str]:
    installed(NODE_MODULES / "@sentry" / "node" / "package.json", "node")
    return NODE_LOGS


def run(cmd: list[str], dsn: str) -> dict[str, str]:
    """Run a program with SENTRY_DSN; it must exit 0 (its SDK reported no failure).
    Returns the ``key=value`` lines it printed."""
    env = {**os.environ, "SENTRY_DSN": dsn, "TRACEBOX_RELEASE": "shop@2.0.0"}
    env["NODE_PATH"] = str(NODE_MODULES)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, f"SDK reported a failure:\n{done.stdout}\n{done.stderr}"
    pairs = (line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    return {key: value for key, value in pairs}


@contextmanager
def browser_session_site(work: Path, dsn: str, release: str) -> Iterator[str]:
    """The @sentry/browser release health program (``programs/browser_session``),
    bundled by esbuild and served on a free loopback port; yields the page's URL."""
    modules = toolchain.toolchain_dir()
    source = work / "browser_session"
    shutil.copytree(BROWSER_SESSION, source)
    os.symlink(modules / "node_modules", source / "node_modules")
    site = source / "dist"
    esbuild = modules / "node_modules" / ".bin" / "esbuild"
    bundle = f"--outfile={site / 'static' / 'app.min.js'}"
    command = [str(esbuild), "main.js", "--bundle", "--minify", bundle, "--log-level=warning"]
    subprocess.run(command, cwd=source, check=True, timeout=toolchain.COMMAND_TIMEOUT_SECONDS)
    config = {"dsn": dsn, "release": release}
    with toolchain.serve_site(site, config, BROWSER_SESSION / "index.html") as url:
        yield url
