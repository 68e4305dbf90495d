"""The chat's seal: AES-GCM over JSON, bound to the person, the conversation and what the value is
(webhost/storage/conversations.py keeps what it seals)."""

from __future__ import annotations

import os
from typing import Any

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

NONCE_BYTES = 12
VERSION = b"\x01"


class ChatSeal:
    """AES-GCM over JSON, bound to the person, the conversation and what the value is."""

    def __init__(self, key: bytes) -> None:
        if len(key) != 32:
            raise ValueError("the chat key must be 32 bytes")
        self._aead = AESGCM(key)

    def seal(self, person_id: str, conversation_id: str, kind: str, value: object) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        return (
            VERSION + nonce + self._aead.encrypt(nonce, orjson.dumps(value), _bound(person_id, conversation_id, kind))
        )

    def open(self, person_id: str, conversation_id: str, kind: str, sealed: bytes) -> Any:
        """The value, or None for a row that does not open (another secret, or tampered with)."""
        if sealed[:1] != VERSION:
            return None
        nonce, body = sealed[1 : 1 + NONCE_BYTES], sealed[1 + NONCE_BYTES :]
        try:
            return orjson.loads(self._aead.decrypt(nonce, body, _bound(person_id, conversation_id, kind)))
        except (InvalidTag, orjson.JSONDecodeError):
            return None


def _bound(person_id: str, conversation_id: str, kind: str) -> bytes:
    return b"\0".join((b"webhost-chat", kind.encode(), person_id.encode(), conversation_id.encode()))
