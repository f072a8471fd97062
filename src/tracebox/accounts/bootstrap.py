"""The first start: an admin ``root`` with a password printed once."""

from __future__ import annotations

import os
from pathlib import Path

from tracebox.accounts import passwords, users
from tracebox.store import Database
from tracebox.store import accounts as account_store

ROOT_USERNAME = "root"
ROOT_EMAIL = "root@localhost"
INITIAL_PASSWORD_FILE = "initial_root_password"


def ensure_root(db: Database, data_dir: Path, root_password: str) -> str | None:
    """Create ``root`` when there are no users yet. With ``root_password`` empty a random
    password is generated, written to ``<data_dir>/initial_root_password`` (mode 0600)
    and returned, so the caller prints it once; otherwise returns None."""
    generated = None if root_password else passwords.random_password()
    with db.write() as conn:
        if account_store.count(conn) > 0:
            return None
        users.create_user(
            conn,
            username=ROOT_USERNAME,
            email=ROOT_EMAIL,
            name="Administrator",
            password=root_password or str(generated),
            is_admin=True,
        )
        if generated is not None:
            _write_secret(data_dir / INITIAL_PASSWORD_FILE, generated)
    return generated


def _write_secret(path: Path, secret: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secret + "\n")
