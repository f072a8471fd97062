"""A PostgreSQL cluster of the test's own, so the test can stop and start it (an outage).

The same steps as scripts/test.sh: Debian's binaries, initdb as the ``postgres`` user
when running as root (PostgreSQL refuses root), a free port, a temporary directory.
Every cluster is stopped and removed by ``close`` (the fixture calls it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.helpers import free_port


def pg_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name))
    return found[-1] if found else None


class PgCluster:
    def __init__(self) -> None:
        bin_dir = pg_bin()
        if bin_dir is None:
            if os.environ.get("TRACEBOX_REQUIRE_POSTGRES"):
                pytest.fail("PostgreSQL binaries are missing (make test installs them)")
            pytest.skip("PostgreSQL binaries are missing (make test installs them)")
        self.bin = bin_dir
        self.dir = Path(tempfile.mkdtemp(prefix="tracebox-pgfault-"))
        self.port = free_port()
        if os.getuid() == 0:
            shutil.chown(self.dir, "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        self.running = False

    @property
    def data(self) -> Path:
        return self.dir / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c max_connections=100"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.dir / "log"), "-w", "-o", options,
                  "start")  # fmt: skip
        self.running = True

    def stop(self, mode: str = "fast") -> None:
        """``fast``: a clean shutdown that cuts every connection; ``immediate``: a crash."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")
        self.running = False

    def create_database(self, name: str) -> str:
        self._run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-q",
                  "-c", f'CREATE DATABASE "{name}"')  # fmt: skip
        return self.url(name)

    def close(self) -> None:
        if self.running:
            self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)

    def _run(self, program: str, *args: str) -> None:
        command = [str(self.bin / program), *args]
        if os.getuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=60, cwd=self.dir)
