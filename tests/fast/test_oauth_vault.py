"""The sealed OAuth rows on both engines (`database_url`): stored, replaced, read back, bound to their
person, server and kind, unreadable under another secret, and forgotten by kind."""

from __future__ import annotations

import anyio
import pytest
import sqlalchemy as sa

from webhost.apps.origins import derive_key
from webhost.storage.db import Storage
from webhost.storage.oauth_tokens import OAuthVault, oauth_grants

pytestmark = pytest.mark.anyio

SECRET = b"unit-secret-0123456789abcdef0123456789abcdef"
TOKENS = {"token": {"access_token": "at-ACCESS", "refresh_token": "rt-REFRESH"}, "expiresAt": 1_790_000_000.5}


async def test_rows_are_sealed_bound_replaced_and_forgotten(database_url: str) -> None:
    storage = Storage(database_url)
    await storage.start()
    try:
        vault = OAuthVault(storage, derive_key(SECRET, "oauth/v1"))
        await vault.put("ada", "secure", "tokens", {"token": {"access_token": "old"}})
        await vault.put("ada", "secure", "tokens", TOKENS)  # replaced, not added
        await vault.put("ada", "secure", "client", {"client_id": "c-1"})
        assert await vault.get("ada", "secure", "tokens") == TOKENS
        assert await vault.get("bob", "secure", "tokens") is None

        async with storage.engine.begin() as db:
            rows = (await db.execute(sa.select(oauth_grants))).mappings().all()
            assert len(rows) == 2
            sealed = next(bytes(r["sealed"]) for r in rows if r["kind"] == "tokens")
            assert b"at-ACCESS" not in sealed and b"rt-REFRESH" not in sealed
            # The sealed row copied to Bob, or to another server, does not open there.
            await db.execute(
                oauth_grants.insert(),
                [
                    {"person_id": "bob", "server": "secure", "kind": "tokens", "sealed": sealed, "updated_at": 1.0},
                    {"person_id": "ada", "server": "other", "kind": "tokens", "sealed": sealed, "updated_at": 1.0},
                ],
            )
        assert await vault.get("bob", "secure", "tokens") is None
        assert await vault.get("ada", "other", "tokens") is None
        assert await OAuthVault(storage, derive_key(SECRET + b"x", "oauth/v1")).get("ada", "secure", "tokens") is None

        await vault.forget("ada", "secure")  # the tokens only: the client registration stays
        assert await vault.get("ada", "secure", "tokens") is None
        assert await vault.get("ada", "secure", "client") == {"client_id": "c-1"}
        await vault.forget("ada", "secure", ("tokens", "client"))
        assert await vault.get("ada", "secure", "client") is None
    finally:
        await storage.close()


async def test_replicas_storing_the_same_row_at_once_leave_one_that_opens(database_url: str) -> None:
    """Several replicas (each its own engine) store a person's tokens in the same instant: no error, one row."""
    replicas = [Storage(database_url) for _ in range(4)]
    await replicas[0].start()
    try:
        vaults = [OAuthVault(storage, derive_key(SECRET, "oauth/v1")) for storage in replicas]
        for _ in range(5):
            async with anyio.create_task_group() as tg:
                for n, vault in enumerate(vaults):
                    tg.start_soon(vault.put, "ada", "secure", "tokens", {"by": n})
        stored = await vaults[0].get("ada", "secure", "tokens")
        assert stored is not None and stored["by"] in range(4)
        async with replicas[0].engine.connect() as db:
            assert (await db.execute(sa.select(sa.func.count()).select_from(oauth_grants))).scalar() == 1
    finally:
        for storage in replicas:
            await storage.close()
