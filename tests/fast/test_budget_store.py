"""The budget's reservations in the database, on both engines (webhost/storage/budgets.py): reservations made
at once through two engines (as two replicas would) never pass the budget by more than one reservation, a
settled step counts what it used, and a dead replica's holds stop counting once its lease has run out."""

from __future__ import annotations

import anyio
import pytest
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.storage.budgets import BudgetStore, Hold, Refused, Usage
from webhost.storage.db import Storage
from webhost.storage.live_calls import replicas

pytestmark = pytest.mark.anyio

DAY, LEASE = "2026-12-05", 10.0


async def beating(storage: Storage, replica_id: str, at: float) -> None:
    async def work(db: AsyncConnection) -> None:
        await db.execute(replicas.insert().values(id=replica_id, started_at=at, heartbeat_at=at))

    await storage.write(work)


async def test_reservations_at_once_from_two_engines_pass_the_budget_by_at_most_one(database_url: str) -> None:
    first, second = Storage(database_url), Storage(database_url)
    await first.start()
    await second.start()
    try:
        await beating(first, "r-a", 1000.0)
        await beating(first, "r-b", 1000.0)
        stores = [(BudgetStore(first), "r-a"), (BudgetStore(second), "r-b")]
        outcomes: list[Hold | Refused] = []

        async def reserve(index: int) -> None:
            store, replica = stores[index % 2]
            outcomes.append(await store.reserve("ada", DAY, 300, 1000, replica_id=replica, now=1001.0, lease=LEASE))

        async with anyio.create_task_group() as tg:
            for index in range(20):
                tg.start_soon(reserve, index)
        held = [o for o in outcomes if isinstance(o, Hold)]
        assert len(held) == 4  # 0, 300, 600, 900 were below 1000 when each was made; 1200 is not
        assert all(isinstance(o, Refused) and o.budget == 1000 for o in outcomes if o not in held)

        for hold in held:  # each step used 100 of its 300
            await BudgetStore(first).settle(hold, Usage("m", "c-1", 60, 40))
        assert await BudgetStore(second).used_on("ada", DAY) == 400
        again = await BudgetStore(second).reserve("ada", DAY, 300, 1000, replica_id="r-b", now=1002.0, lease=LEASE)
        assert isinstance(again, Hold)  # the settled holds are gone: 400 used, nothing held
    finally:
        await first.close()
        await second.close()


async def test_the_holds_of_a_replica_whose_lease_ran_out_stop_counting(database_url: str) -> None:
    storage = Storage(database_url)
    await storage.start()
    try:
        await beating(storage, "r-dead", 1000.0)
        store = BudgetStore(storage)
        dead = await store.reserve("bo", DAY, 900, 500, replica_id="r-dead", now=1000.0, lease=LEASE)
        assert isinstance(dead, Hold)
        refused = await store.reserve("bo", DAY, 100, 500, replica_id="r-live", now=1005.0, lease=LEASE)
        assert isinstance(refused, Refused) and refused.held == 900  # r-dead is still within its lease
        taken = await store.reserve("bo", DAY, 100, 500, replica_id="r-live", now=1011.0, lease=LEASE)
        assert isinstance(taken, Hold)  # r-dead's heartbeat is older than the lease: its hold no longer counts
    finally:
        await storage.close()
