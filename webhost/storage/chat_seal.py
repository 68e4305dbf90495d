"""The chat's seal: AES-GCM over JSON (`storage/envelope.py`), bound to the person, the conversation and what the
value is (webhost/storage/conversations.py keeps what it seals)."""

from __future__ import annotations

from typing import Any

import orjson

from webhost.storage.envelope import Envelope


class ChatSeal:
    """AES-GCM over JSON, bound to the person, the conversation and what the value is."""

    def __init__(self, key: bytes) -> None:
        self._envelope = Envelope(key, "chat")

    def seal(self, person_id: str, conversation_id: str, kind: str, value: object) -> bytes:
        return self._envelope.seal(orjson.dumps(value), _bound(person_id, conversation_id, kind))

    def open(self, person_id: str, conversation_id: str, kind: str, sealed: bytes) -> Any:
        """The value, or None for a row that does not open (another secret, or tampered with)."""
        plain = self._envelope.open(sealed, _bound(person_id, conversation_id, kind))
        if plain is None:
            return None
        try:
            return orjson.loads(plain)
        except orjson.JSONDecodeError:
            return None


class BytesSeal:
    """The chat's seal over raw bytes (an attachment's content: no JSON copy of a large file)."""

    def __init__(self, seal: ChatSeal) -> None:
        self._envelope = seal._envelope

    def seal(self, person_id: str, owner_id: str, kind: str, data: bytes) -> bytes:
        return self._envelope.seal(data, _bound(person_id, owner_id, kind))

    def open(self, person_id: str, owner_id: str, kind: str, sealed: bytes) -> bytes | None:
        return self._envelope.open(sealed, _bound(person_id, owner_id, kind))


def _bound(person_id: str, conversation_id: str, kind: str) -> bytes:
    return b"\0".join((b"webhost-chat", kind.encode(), person_id.encode(), conversation_id.encode()))
