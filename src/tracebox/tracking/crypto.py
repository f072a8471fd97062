"""External auth tokens encrypted at rest with the instance's secret key (contract 5).

Fernet (AES-128-CBC + HMAC-SHA256, from ``cryptography``) with a key derived from the
instance secret by HKDF-SHA256, so the token key is never the session-signing key.
Changing the secret key makes stored tokens unreadable: the settings page then asks for
the token again.

``cryptography`` (~9 MB) is imported when a cipher is first used, not when it is made:
the alert sender holds one from its start and most servers never deliver a webhook.
"""

from __future__ import annotations

import base64
import functools
from typing import TYPE_CHECKING

from tracebox.errors import BadRequest

if TYPE_CHECKING:
    from cryptography.fernet import Fernet

HKDF_INFO = b"tracebox external auth token v1"
UNREADABLE = (
    "The stored Sentry auth token cannot be decrypted (was the instance secret key "
    "changed?). Enter the auth token again and save"
)


class TokenCipher:
    def __init__(self, instance_secret: bytes, *, info: bytes = HKDF_INFO) -> None:
        # ``info`` separates keys per use (alert webhook URLs use their own).
        self._secret = instance_secret
        self._info = info

    @functools.cached_property
    def _fernet(self) -> Fernet:
        from cryptography.fernet import Fernet
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=self._info)
        return Fernet(base64.urlsafe_b64encode(hkdf.derive(self._secret)))

    def encrypt(self, token: str) -> str:
        return self._fernet.encrypt(token.encode()).decode()

    def decrypt(self, encrypted: str) -> str:
        from cryptography.fernet import InvalidToken

        try:
            return self._fernet.decrypt(encrypted.encode()).decode()
        except (InvalidToken, ValueError) as e:
            raise BadRequest(UNREADABLE) from e

    def __repr__(self) -> str:  # never shows key material
        return "TokenCipher(<hidden>)"
