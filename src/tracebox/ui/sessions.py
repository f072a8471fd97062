"""Signed session cookies, CSRF tokens and the instance secret (no server-side state).

The session cookie holds a random nonce, the signed-in user's id, a fingerprint of their
password hash, the time it was issued and pending flash messages, signed with
HMAC-SHA256. Changing a password or blocking a user ends their sessions at once (both are
checked on every request); a session also ends ``session_lifetime_hours`` after sign-in.
The CSRF token is an HMAC of the session nonce, so it needs no storage either, and signing
in draws a new nonce (no session fixation).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from tracebox.config import Settings
from tracebox.tracking.instance_secret import instance_secret

__all__ = ["instance_secret"]  # re-exported: the UI signs sessions with it

COOKIE_NAME = "tracebox_session"
MAX_COOKIE_BYTES = 4096  # browsers keep at most ~4 KiB per cookie
MAX_FLASHES = 5


@dataclass
class Session:
    nonce: str
    user_id: int | None = None
    password_fingerprint: str = ""
    issued_at: float = 0.0
    flashes: list[tuple[str, str]] = field(default_factory=list)
    changed: bool = False

    def flash(self, kind: str, text: str) -> None:
        self.flashes = [*self.flashes, (kind, text)][-MAX_FLASHES:]
        self.changed = True

    def pop_flashes(self) -> list[tuple[str, str]]:
        found, self.flashes = self.flashes, []
        self.changed = self.changed or bool(found)
        return found

    def sign_in(self, user_id: int, password_hash: str, now: float) -> None:
        self.nonce = new_nonce()
        self.user_id = user_id
        self.password_fingerprint = fingerprint(password_hash)
        self.issued_at = now
        self.changed = True

    def sign_out(self) -> None:
        self.nonce = new_nonce()
        self.user_id = None
        self.password_fingerprint = ""
        self.issued_at = 0.0
        self.changed = True


def new_nonce() -> str:
    return secrets.token_urlsafe(18)


def fingerprint(password_hash: str) -> str:
    return hashlib.sha256(password_hash.encode()).hexdigest()[:24]


class Signer:
    """HMAC-SHA256 over cookie payloads and CSRF tokens, with keys derived per purpose."""

    def __init__(self, secret: bytes) -> None:
        self._session_key = hmac.digest(secret, b"tracebox session cookie", "sha256")
        self._csrf_key = hmac.digest(secret, b"tracebox csrf token", "sha256")

    def dumps(self, session: Session) -> str:
        payload = {
            "n": session.nonce,
            "u": session.user_id,
            "p": session.password_fingerprint,
            "t": session.issued_at,
            "f": session.flashes,
        }
        body = _b64(orjson.dumps(payload))
        return f"{body}.{_b64(hmac.digest(self._session_key, body.encode(), 'sha256'))}"

    def loads(self, cookie: str | None) -> Session:
        """The session in a valid cookie, else a fresh anonymous one."""
        data = self._verified(cookie) if cookie and len(cookie) <= MAX_COOKIE_BYTES else None
        if data is None:
            return Session(nonce=new_nonce(), changed=True)
        try:
            flashes = [(str(k), str(t)) for k, t in data.get("f", [])][-MAX_FLASHES:]
            user_id = data.get("u")
            return Session(
                nonce=str(data["n"]),
                user_id=user_id if isinstance(user_id, int) else None,
                password_fingerprint=str(data.get("p", "")),
                issued_at=float(data.get("t", 0.0)),
                flashes=flashes,
            )
        except (KeyError, TypeError, ValueError):
            return Session(nonce=new_nonce(), changed=True)

    def csrf_token(self, session: Session) -> str:
        return hmac.digest(self._csrf_key, session.nonce.encode(), "sha256").hex()

    def csrf_valid(self, session: Session, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(self.csrf_token(session), token or "")

    def _verified(self, cookie: str) -> dict[str, Any] | None:
        body, _, mac = cookie.partition(".")
        expected = _b64(hmac.digest(self._session_key, body.encode(), "sha256"))
        if not mac or not hmac.compare_digest(expected, mac):
            return None
        try:
            data = orjson.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        except (ValueError, orjson.JSONDecodeError):
            return None
        return data if isinstance(data, dict) else None


def expired(session: Session, settings: Settings, now: float | None = None) -> bool:
    now = time.time() if now is None else now
    return now - session.issued_at > settings.session_lifetime_hours * 3600


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
