"""The input vault: values sealed per person and input, unreadable under another secret or in another row."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from webhost.apps.origins import derive_key
from webhost.storage.db import Storage, person_inputs
from webhost.storage.inputs import InputVault

pytestmark = pytest.mark.anyio
SECRET = b"unit-secret-0123456789abcdef0123456789abcdef"


async def test_values_are_sealed_bound_to_their_row_and_forgotten(tmp_path: Path, database_url: str) -> None:
    storage = Storage(database_url)
    await storage.start()
    try:
        vault = InputVault(storage, derive_key(SECRET, "inputs/v1"))
        await vault.store("ada", {"api_key": "value-of-ada-1234", "region": "eu-west-1"})
        await vault.store("bob", {"api_key": "value-of-bob-5678"})
        assert await vault.values("ada") == {"api_key": "value-of-ada-1234", "region": "eu-west-1"}
        assert await vault.values("bob") == {"api_key": "value-of-bob-5678"}
        await vault.store("ada", {"api_key": "replaced-value-9"})
        assert (await vault.values("ada"))["api_key"] == "replaced-value-9"

        other = InputVault(storage, derive_key(SECRET + b"x", "inputs/v1"))
        assert await other.values("ada") == {}  # another deployment secret opens nothing

        async with storage.engine.begin() as db:  # ada's sealed key copied into bob's row does not open
            sealed = (
                await db.execute(
                    sa.select(person_inputs.c.sealed).where(
                        person_inputs.c.person_id == "ada", person_inputs.c.input_id == "api_key"
                    )
                )
            ).scalar_one()
            await db.execute(person_inputs.update().where(person_inputs.c.person_id == "bob").values(sealed=sealed))
        assert await vault.values("bob") == {}

        await vault.forget("ada", ["api_key"])
        assert await vault.values("ada") == {"region": "eu-west-1"}
        async with storage.engine.connect() as db:  # on either engine, what rests is sealed
            stored = [bytes(row.sealed) for row in await db.execute(sa.select(person_inputs.c.sealed))]
        assert stored and not any(b"value-of" in value or b"eu-west" in value for value in stored)
    finally:
        await storage.close()
    if storage.dialect == "sqlite":
        assert b"value-of-ada" not in (tmp_path / "engine.sqlite3").read_bytes()
