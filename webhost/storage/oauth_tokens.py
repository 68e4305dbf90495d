"""Each person's OAuth state per remote server (tokens; the client registration and the discovered
metadata), sealed at rest.

Rows are JSON sealed with AES-GCM (`cryptography`), as `${input:ID}` values are (storage/inputs.py),
under a key of their own derived from the deployment secret (`derive_key(secret, "oauth/v1")`). The
person, the server and the kind of row are the associated data, so a sealed token copied to another
person, server or row does not open. Nothing here is ever logged or sent to a browser.
"""

from __future__ import annotations

import json
import time
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.storage.db import Storage, metadata
from webhost.storage.envelope import Envelope
from webhost.storage.portable import upsert

Kind = Literal["tokens", "client"]

oauth_grants = sa.Table(
    "oauth_grants",
    metadata,
    sa.Column("person_id", sa.String(255), primary_key=True),
    sa.Column("server", sa.String(255), primary_key=True),
    sa.Column("kind", sa.String(16), primary_key=True),
    sa.Column("sealed", sa.LargeBinary, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)


class OAuthVault:
    """Read, store and forget sealed OAuth rows; plaintext exists only in memory."""

    def __init__(self, storage: Storage, key: bytes) -> None:
        self._envelope = Envelope(key, "OAuth")
        self.storage = storage

    def _seal(self, person_id: str, server: str, kind: Kind, value: dict[str, Any]) -> bytes:
        plain = json.dumps(value, separators=(",", ":")).encode("utf-8")
        return self._envelope.seal(plain, _bound(person_id, server, kind))

    def _open(self, person_id: str, server: str, kind: Kind, sealed: bytes) -> dict[str, Any] | None:
        plain = self._envelope.open(sealed, _bound(person_id, server, kind))  # None: another secret, or tampered with
        if plain is None:
            return None
        try:
            value = json.loads(plain)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    async def get(self, person_id: str, server: str, kind: Kind) -> dict[str, Any] | None:
        query = sa.select(oauth_grants.c.sealed).where(
            oauth_grants.c.person_id == person_id, oauth_grants.c.server == server, oauth_grants.c.kind == kind
        )
        async with self.storage.read() as db:
            sealed = (await db.execute(query)).scalar()
        return None if sealed is None else self._open(person_id, server, kind, bytes(sealed))

    async def put(self, person_id: str, server: str, kind: Kind, value: dict[str, Any]) -> None:
        sealed = self._seal(person_id, server, kind, value)
        row = {"person_id": person_id, "server": server, "kind": kind, "sealed": sealed, "updated_at": time.time()}

        # An upsert, not delete-then-insert: two replicas storing the same row at once on PostgreSQL would
        # both find nothing to wait for and one insert would fail on the key.
        async def work(db: AsyncConnection) -> None:
            await upsert(db, oauth_grants, row, key=("person_id", "server", "kind"))

        await self.storage.write(work)

    async def forget(self, person_id: str, server: str, kinds: tuple[Kind, ...] = ("tokens",)) -> None:
        async def work(db: AsyncConnection) -> None:
            await db.execute(
                oauth_grants.delete().where(
                    oauth_grants.c.person_id == person_id,
                    oauth_grants.c.server == server,
                    oauth_grants.c.kind.in_(kinds),
                )
            )

        await self.storage.write(work)


def _bound(person_id: str, server: str, kind: str) -> bytes:
    return b"webhost-oauth\0" + b"\0".join(part.encode("utf-8") for part in (person_id, server, kind))
