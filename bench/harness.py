"""The server under test: ``tracebox serve`` in its own session, its processes and memory."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tracebox(global_args: list[str], *args: str) -> str:
    """Run a ``tracebox`` command with this interpreter; return its stdout."""
    cmd = [sys.executable, "-m", "tracebox", *global_args, *args]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout


class Server:
    """``tracebox serve`` started in a new session: every process it spawns (web workers,
    the digest worker, multiprocessing helpers) shares the leader's session id."""

    def __init__(
        self,
        global_args: list[str],
        workers: int,
        log_path: Path,
        launcher: tuple[str, ...] = ("-m", "tracebox"),
    ) -> None:
        """``launcher``: what runs ``tracebox`` after the interpreter (a script that
        wraps it, as ``held_requests.py`` does)."""
        self.port = free_port()
        self.log_path = log_path
        cmd = [sys.executable, *launcher, *global_args, "serve", "--host", "127.0.0.1"]
        cmd += ["--port", str(self.port), "--workers", str(workers)]
        with log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    def wait_healthy(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited ({self.proc.returncode}):\n{self.log_tail()}")
            try:
                url = f"http://127.0.0.1:{self.port}/-/health"
                with urllib.request.urlopen(url, timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"server not healthy after {timeout:.0f} s:\n{self.log_tail()}")

    def digest_batches(self) -> tuple[int, int]:
        """(batches, records) the digest worker has done so far, from ``/-/metrics``."""
        url = f"http://127.0.0.1:{self.port}/-/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            text = response.read().decode()
        found = dict.fromkeys(("count", "sum"), 0.0)
        for line in text.splitlines():
            for kind in found:
                if line.startswith(f"tracebox_digest_batch_records_{kind} "):
                    found[kind] = float(line.split()[1])
        return int(found["count"]), int(found["sum"])

    def pids(self) -> list[int]:
        """Every live process of the server's session, the leader first."""
        return session_pids(self.proc.pid)

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM the process group, wait, then SIGKILL whatever of the session is left."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        deadline = time.monotonic() + timeout
        while (left := self.pids()) and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in left:
            os.kill(pid, signal.SIGKILL)

    def log_tail(self, lines: int = 30) -> str:
        text = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])


def session_pids(sid: int) -> list[int]:
    """Processes whose session id is ``sid`` (field 6 of /proc/PID/stat), sorted."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        fields = stat.rpartition(b")")[2].split()
        if int(fields[3]) == sid and fields[0] != b"Z":
            found.append(int(entry.name))
    return sorted(found, key=lambda pid: (pid != sid, pid))


def describe(pid: int, leader: int) -> str:
    """A short name for a server process. The digest worker is ``python -m
    tracebox.supervisor`` (before issue 10's memory work: the leader's first
    multiprocessing child, started before uvicorn starts any worker)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "gone"
    if pid == leader:
        return "serve (leader; uvicorn when --workers 1)"
    if "-m tracebox.supervisor" in cmdline:  # serve's background process
        return "digest"
    if "-m tracebox.digest.prepare_process" in cmdline:  # the digest's child (issue 10)
        return "digest prepare process"
    if "resource_tracker" in cmdline:
        return "multiprocessing resource tracker"
    if "spawn_main" in cmdline:
        return "spawned child"
    return cmdline[:60]


@dataclass
class RssSampler:
    """Sums the resident set of every server process every ``interval`` seconds."""

    leader: int
    interval: float = 0.1
    peak_total: int = 0
    totals: list[tuple[float, int]] = field(default_factory=list)  # (monotonic, bytes)
    peaks: dict[int, int] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    kinds: dict[int, str] = field(default_factory=dict)
    samples: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()

    def peak_between(self, start: float, end: float) -> int:
        return max((b for t, b in self.totals if start <= t <= end), default=0)

    def _run(self) -> None:
        pids: list[int] = []
        while not self._stop.is_set():
            if self.samples % 10 == 0:  # membership changes rarely: rescan once a second
                pids = session_pids(self.leader)
                self._name(pids)
            self.samples += 1
            total = 0
            for pid in pids:
                rss = rss_bytes(pid)
                total += rss
                self.peaks[pid] = max(self.peaks.get(pid, 0), rss)
            self.peak_total = max(self.peak_total, total)
            self.totals.append((time.monotonic(), total))
            self._stop.wait(self.interval)

    def _name(self, pids: list[int]) -> None:
        for pid in pids:
            if pid not in self.kinds:
                self.kinds[pid] = describe(pid, self.leader)
        spawned = sorted(p for p, kind in self.kinds.items() if kind == "spawned child")
        digest_spawned = "digest" not in self.kinds.values()  # as serve did before issue 10
        for pid, kind in self.kinds.items():
            if kind == "spawned child":
                first = digest_spawned and pid == spawned[0]
                kind = "digest" if first else f"web worker {pid}"
            self.names[pid] = kind


def cpu_seconds(pids: list[int]) -> dict[int, float]:
    """User + system CPU seconds each process has used so far (fields 14 and 15 of stat)."""
    return {pid: (user + system) / CLOCK_TICKS for pid, (user, system) in _ticks(pids).items()}


def system_cpu_seconds(pids: list[int]) -> dict[int, float]:
    """The system (kernel) part of ``cpu_seconds``: syscalls such as socket I/O and fsync."""
    return {pid: system / CLOCK_TICKS for pid, (_, system) in _ticks(pids).items()}


def _ticks(pids: list[int]) -> dict[int, tuple[int, int]]:
    out = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rpartition(b")")[2].split()
        except OSError:
            continue
        out[pid] = (int(fields[11]), int(fields[12]))
    return out


def postgres_pids(database: str) -> list[int]:
    """The processes of the PostgreSQL cluster serving ``database``: the postmaster of any
    backend whose title names that database, and all of the postmaster's children
    (backends, WAL writer, checkpointer...). Other clusters on the machine are left out."""
    children: dict[int, list[int]] = {}
    postmasters = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if _read(f"/proc/{entry.name}/comm").strip() != "postgres":
                continue
            ppid = int(_read(f"/proc/{entry.name}/stat").rpartition(")")[2].split()[1])
            title = _read(f"/proc/{entry.name}/cmdline").replace("\0", " ")
        except OSError:
            continue
        children.setdefault(ppid, []).append(int(entry.name))
        if title.startswith("postgres: ") and f" {database} " in title:
            postmasters.add(ppid)
    return sorted({*postmasters, *(c for pm in postmasters for c in children.get(pm, []))})


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def machine_busy_seconds() -> tuple[float, float]:
    """CPU seconds the whole machine has been busy (all CPUs) and stolen by the hypervisor,
    from the first line of /proc/stat."""
    with open("/proc/stat", "rb") as f:
        ticks = [int(v) for v in f.readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = ticks
    return (user + nice + system + irq + softirq) / CLOCK_TICKS, steal / CLOCK_TICKS


def wait_until_idle(max_wait: float, threshold: float = 0.10, window: float = 3.0) -> float:
    """Wait (at most ``max_wait`` seconds) for a ``window`` in which the machine is busy
    less than ``threshold`` of its CPUs; return the last busy fraction seen."""
    deadline = time.monotonic() + max_wait
    while True:
        busy, _ = machine_busy_seconds()
        time.sleep(window)
        fraction = (machine_busy_seconds()[0] - busy) / (window * (os.cpu_count() or 1))
        if fraction < threshold or time.monotonic() > deadline:
            return fraction


def rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE_BYTES
    except (OSError, IndexError):
        return 0
