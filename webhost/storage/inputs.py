"""The values each person provides for `${input:ID}` (contract §6), encrypted at rest.

Each value is sealed with AES-GCM (`cryptography`) under a key the composition root derives from
the deployment secret (`derive_key(secret, "inputs/v1")`); the person's id and the input's id are
the associated data, so a sealed value copied to another row or person does not open. Without the
deployment secret the database holds nothing readable.
"""

from __future__ import annotations

import time

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.storage.db import Storage, person_inputs
from webhost.storage.envelope import Envelope
from webhost.storage.portable import upsert


class InputVault:
    """Read, store and forget one person's input values; the values are only ever plaintext in memory."""

    def __init__(self, storage: Storage, key: bytes) -> None:
        self._envelope = Envelope(key, "input")
        self.storage = storage

    def _seal(self, person_id: str, input_id: str, value: str) -> bytes:
        return self._envelope.seal(value.encode("utf-8"), _bound(person_id, input_id))

    def _open(self, person_id: str, input_id: str, sealed: bytes) -> str | None:
        plain = self._envelope.open(sealed, _bound(person_id, input_id))  # None: another secret, or tampered with
        try:
            return None if plain is None else plain.decode("utf-8")
        except UnicodeDecodeError:
            return None

    async def values(self, person_id: str) -> dict[str, str]:
        """The person's stored values (a row that does not open under this secret is left out)."""
        query = sa.select(person_inputs.c.input_id, person_inputs.c.sealed).where(
            person_inputs.c.person_id == person_id
        )
        async with self.storage.read() as db:
            rows = (await db.execute(query)).all()
        opened = {row.input_id: self._open(person_id, row.input_id, bytes(row.sealed)) for row in rows}
        return {key: value for key, value in opened.items() if value is not None}

    async def store(self, person_id: str, values: dict[str, str]) -> None:
        now = time.time()

        async def work(db: AsyncConnection) -> None:
            for input_id, value in values.items():
                sealed = self._seal(person_id, input_id, value)
                row = {"person_id": person_id, "input_id": input_id, "sealed": sealed, "updated_at": now}
                await upsert(db, person_inputs, row, key=["person_id", "input_id"])

        await self.storage.write(work)

    async def forget(self, person_id: str, input_ids: list[str]) -> None:
        async def work(db: AsyncConnection) -> None:
            await db.execute(
                person_inputs.delete().where(
                    person_inputs.c.person_id == person_id, person_inputs.c.input_id.in_(input_ids)
                )
            )

        await self.storage.write(work)


def _bound(person_id: str, input_id: str) -> bytes:
    return b"webhost-input\0" + person_id.encode("utf-8") + b"\0" + input_id.encode("utf-8")
