"""The one AES-GCM envelope of what webhost seals at rest (ID tokens, input values, OAuth grants, live rounds, the
chat): a version byte (1), a random 12-byte nonce, then the ciphertext with its tag. The associated data binds a
value to where it belongs (its person, its row): moved elsewhere, or under another secret, it does not open."""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

VERSION = b"\x01"
NONCE_BYTES = 12


class Envelope:
    def __init__(self, key: bytes, what: str | None = None) -> None:
        """`what` names the key in the error a key of the wrong size raises (None: AESGCM's own check)."""
        if what is not None and len(key) != 32:
            raise ValueError(f"the {what} key must be 32 bytes")
        self._aead = AESGCM(key)

    def seal(self, plain: bytes, bound: bytes) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        return VERSION + nonce + self._aead.encrypt(nonce, plain, bound)

    def open(self, sealed: bytes | None, bound: bytes) -> bytes | None:
        """The plaintext, or None for another version, another secret, or a value tampered with or moved."""
        if not sealed or sealed[:1] != VERSION:
            return None
        view = memoryview(sealed)  # the ciphertext read where it is: no copy of a large value (an attachment)
        try:
            return self._aead.decrypt(view[1 : 1 + NONCE_BYTES], view[1 + NONCE_BYTES :], bound)
        except InvalidTag:
            return None
