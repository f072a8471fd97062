"""The data directory's identity and ownership: one running instance, one node id.

- ``lock``: ``tracebox serve`` and ``tracebox digest`` hold an exclusive ``flock`` on
  ``<data dir>/tracebox.lock`` for as long as they run. A second instance on the same
  directory stops before it touches anything (spool, metrics, run state): two digests
  on one spool, or a second ``serve`` wiping the first one's metrics, is what issue 9
  saw without it. The kernel drops the lock of a dead process, so a crash never leaves
  a stale lock behind.
- ``node_id``: a random id created once in ``<data dir>/node_id``. It names this node's
  spool cursors in a shared database, so two nodes on one machine (same host name) are
  still two nodes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import uuid
from pathlib import Path

from tracebox.spool.format import fsync_directory

LOCK_FILE = "tracebox.lock"
NODE_ID_FILE = "node_id"


class DataDirInUse(Exception):
    """Another process holds the data directory's lock."""


class DataDirLock:
    """The held lock; released by ``release`` or when the process ends."""

    def __init__(self, fd: int, path: Path) -> None:
        self._fd: int | None = fd
        self.path = path

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def lock(data_dir: Path, *, name: str = LOCK_FILE) -> DataDirLock:
    """Take ``<data_dir>/<name>`` exclusively, or raise ``DataDirInUse`` at once.

    The holder writes its pid into the file, so the message can name it. The file
    descriptor is not inherited by child processes (Python opens files close-on-exec).
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / name
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _read_pid(fd)
        os.close(fd)
        raise DataDirInUse(
            f"the data directory {data_dir.resolve()} is in use by another tracebox process"
            f"{f' (pid {holder})' if holder else ''}; stop it first, or give this one its "
            "own --data-dir"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return DataDirLock(fd, path)


def _read_pid(fd: int) -> str:
    with contextlib.suppress(OSError):
        text = os.pread(fd, 32, 0).decode(errors="replace").strip()
        if text.isdigit():
            return text
    return ""


def node_id(data_dir: Path) -> str:
    """This node's id: read from ``<data_dir>/node_id``, created there on first use.

    Call it while holding the data directory's lock, so two processes never race to
    create it. Written to a temporary name, fsynced and renamed, so a crash never leaves
    a half-written id (which would orphan the node's cursors).
    """
    path = data_dir / NODE_ID_FILE
    with contextlib.suppress(FileNotFoundError):
        existing = path.read_text().strip()
        if existing:
            return existing
    data_dir.mkdir(parents=True, exist_ok=True)
    new = uuid.uuid4().hex
    tmp = path.with_name(NODE_ID_FILE + ".new")
    with open(tmp, "w") as file:
        file.write(new + "\n")
        file.flush()
        os.fsync(file.fileno())
    os.rename(tmp, path)
    fsync_directory(data_dir)
    return new
