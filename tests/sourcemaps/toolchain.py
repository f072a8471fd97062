"""The source maps test app's toolchain: esbuild, sentry-cli and a static web server.

``scripts/install-sdks.sh sourcemaps`` installs the npm packages of
``tests/sourcemaps/app/package.json`` (pinned: @sentry/cli 3.8.0 with its Linux binary
package, esbuild 0.28.2, @sentry/browser 11.12.0) into ``.cache/sdk/sourcemaps-app``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.helpers import SDK_CACHE, missing

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "tests" / "sourcemaps" / "app"
SENTRY_CLI_VERSION = "3.8.0"
COMMAND_TIMEOUT_SECONDS = 120


def toolchain_dir() -> Path:
    """The installed npm packages; a failure under ``make test``, else a skip."""
    found = SDK_CACHE / "sourcemaps-app"
    if not (found / "node_modules" / "@sentry" / "cli-linux-x64" / "bin" / "sentry-cli").exists():
        missing(f"run scripts/install-sdks.sh sourcemaps ({found} is missing)")
    return found


class Toolchain:
    def __init__(self, modules: Path, work: Path) -> None:
        self.modules = modules
        self.work = work
        self.cli = modules / "node_modules" / "@sentry" / "cli-linux-x64" / "bin" / "sentry-cli"

    def build(self, label: str) -> Path:
        """Bundle and minify the app with esbuild; returns the site directory holding
        ``static/app.min.js`` and ``static/app.min.js.map``."""
        source = self.work / label  # as a project checkout: src/ and the build in dist/
        shutil.rmtree(source, ignore_errors=True)
        shutil.copytree(APP / "src", source / "src")
        os.symlink(self.modules / "node_modules", source / "node_modules")
        site = source / "dist"
        subprocess.run(
            [
                str(self.modules / "node_modules" / ".bin" / "esbuild"),
                "src/main.js",
                "--bundle",
                "--minify",
                "--sourcemap",
                f"--define:BUILD_LABEL={json.dumps(label)}",
                f"--outfile={site / 'static' / 'app.min.js'}",
                "--log-level=warning",
            ],
            cwd=source,
            check=True,
            timeout=COMMAND_TIMEOUT_SECONDS,
        )
        return site

    def sentry_cli(self, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(self.cli), *args],
            env={**os.environ, **env, "SENTRY_LOG_LEVEL": "info"},
            cwd=self.work,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_SECONDS,
        )
        if done.returncode != 0:
            raise AssertionError(
                f"sentry-cli {' '.join(args)} failed ({done.returncode}):\n"
                f"{done.stdout}\n{done.stderr}"
            )
        return done


@contextmanager
def serve_site(
    site: Path, config: dict[str, str], template: Path = APP / "index.html"
) -> Iterator[str]:
    """Serve ``site`` on a free loopback port with the app's page (``template`` with
    ``__CONFIG__`` replaced); yields its URL."""
    page = template.read_text().replace("__CONFIG__", json.dumps(config))
    (site / "index.html").write_text(page)
    handler = partial(_QuietHandler, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass
