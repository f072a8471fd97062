"""The instance secret key: ``TRACEBOX_SECRET_KEY``, or a random key kept in the data
directory. It signs UI sessions and encrypts external auth tokens (contract 5)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from tracebox.config import Settings

SECRET_FILE = "secret_key"


def instance_secret(settings: Settings) -> bytes:
    """``TRACEBOX_SECRET_KEY``, else a random key kept in ``<data_dir>/secret_key``
    (created once, mode 0600; concurrent first starts agree on one file)."""
    if settings.secret_key:
        return settings.secret_key.encode()
    path = settings.data_dir / SECRET_FILE
    if not path.exists():
        _create_secret(path)
    return path.read_bytes().strip()


def _create_secret(path: Path) -> None:
    """Write a temporary file, then link it into place: a reader never sees it half
    written, and the first of two concurrent starts wins."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_urlsafe(48) + "\n")
        f.flush()
        os.fsync(f.fileno())
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
