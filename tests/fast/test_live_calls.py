"""The live-calls store and the journal on both engines: leases, the compare-and-set takeover (also
with several replicas racing for one call, each on its own engine), sealed rounds, batched writes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
import sqlalchemy as sa

from webhost.apps.origins import derive_key
from webhost.journal import CallJournal
from webhost.storage.db import Storage
from webhost.storage.live_calls import LiveCallStore, RoundSeal, Write, live_calls
from webhost.upstream.rounds import round_listener

pytestmark = pytest.mark.anyio
SECRET = b"unit-secret-0123456789abcdef0123456789abcdef"
REQUEST: dict[str, Any] = {"method": "tools/call", "params": {"name": "t", "arguments": {"k": "v"}}}
ROUND: dict[str, Any] = {"request": REQUEST, "requestState": "s"}


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[LiveCallStore]:
    storage = Storage(database_url)
    await storage.start()
    try:
        yield LiveCallStore(storage, RoundSeal(derive_key(SECRET, "live-calls/v1")))
    finally:
        await storage.close()


def row(replica: str, person: str = "ada", **extra: object) -> dict[str, object]:
    return {
        "replica_id": replica,
        "person_id": person,
        "server": "s",
        "method": "tools/call",
        "name": "t",
        "call_id": "c",
        "tab_id": None,
        "started_at": 100.0,
        "question": False,
        **extra,
    }


async def test_only_calls_of_gone_replicas_are_orphans_and_a_live_one_says_when_to_look_again(
    store: LiveCallStore,
) -> None:
    await store.beat("alive", 1000.0)
    await store.beat("stale", 980.0)
    await store.beat("released", 1000.0)
    await store.release("released")
    await store.apply(
        [
            Write("insert", name, row(owner, call_id=name))
            for name, owner in [("a", "alive"), ("s", "stale"), ("r", "released"), ("m", "me"), ("never", "ghost")]
        ]
        + [Write("insert", "bob's", row("ghost", person="bob"))]
    )
    found = await store.orphans("ada", "me", 1000.0, 10.0)
    assert sorted(c.call_id for c in found.calls) == ["never", "r", "s"]  # not ours, not the live one's, not bob's
    assert found.recheck_in == 10.0  # the live replica's lease runs out in 10 s
    later = await store.orphans("ada", "me", 1010.5, 10.0)
    assert "a" in [c.call_id for c in later.calls] and later.recheck_in is None


async def test_a_call_is_taken_over_once(store: LiveCallStore) -> None:
    await store.apply([Write("insert", "x", row("dead"))])
    (call,) = (await store.orphans("ada", "b", 1000.0, 10.0)).calls
    assert await store.claim(call, "b") is True
    assert await store.claim(call, "c") is False  # C saw the same row, but B was first
    assert [c.id for c in await store.calls_of("b")] == ["x"]


async def test_replicas_racing_for_one_call_take_it_once(store: LiveCallStore) -> None:
    """Each contender has an engine (a pool) of its own, as a replica has, and all update at once."""
    await store.apply([Write("insert", f"call-{n}", row("dead", call_id=f"call-{n}")) for n in range(5)])
    calls = (await store.orphans("ada", "nobody", 1000.0, 10.0)).calls
    contenders = [Storage(store.storage.url) for _ in range(4)]
    won: dict[str, list[str]] = {call.id: [] for call in calls}

    async def contend(number: int, storage: Storage) -> None:
        mine = LiveCallStore(storage, store.seal)
        for call in calls:
            if await mine.claim(call, f"replica-{number}"):
                won[call.id].append(f"replica-{number}")

    try:
        async with anyio.create_task_group() as tg:
            for number, storage in enumerate(contenders):
                tg.start_soon(contend, number, storage)
    finally:
        for storage in contenders:
            await storage.close()
    assert all(len(winners) == 1 for winners in won.values()), won
    owners = {winners[0] for winners in won.values()}
    taken = [c.id for owner in owners for c in await store.calls_of(owner)]
    assert sorted(taken) == sorted(won)


async def test_a_round_is_sealed_to_its_person_and_row(store: LiveCallStore) -> None:
    sealed = store.sealed_round("ada", "x", ROUND)
    assert b"requestState" not in sealed and b"arguments" not in sealed
    await store.apply([Write("insert", "x", row("dead", sealed_round=sealed))])
    await store.apply([Write("insert", "y", row("dead", sealed_round=sealed))])  # copied to another row
    calls = {c.id: c for c in (await store.orphans("ada", "b", 1000.0, 10.0)).calls}
    assert calls["x"].round == ROUND
    assert calls["y"].round is None and calls["y"].sealed  # it does not open there: reported, not resumed
    other = LiveCallStore(store.storage, RoundSeal(derive_key(SECRET + b"x", "live-calls/v1")))
    assert (await other.orphans("ada", "b", 1000.0, 10.0)).calls[0].round is None


async def test_the_journal_writes_a_call_and_its_rounds_and_keeps_only_waiting_ones_at_a_clean_stop(
    store: LiveCallStore,
) -> None:
    async def rows() -> dict[str, dict[str, object]]:
        await journal.flush()
        async with store.storage.engine.connect() as db:
            found = (await db.execute(sa.select(live_calls))).mappings().all()
        return {str(r["call_id"]): dict(r) for r in found}

    journal = CallJournal(store, replica_id="me")
    async with anyio.create_task_group() as tg:
        await journal.start(tg)
        origin = {"method": "tools/call", "name": "t", "server": "s"}
        with journal.running("ada", "tab-1", {**origin, "callId": "quick"}):
            pass
        assert await rows() == {}  # started and ended: nothing left (maybe never written at all)

        with journal.running("ada", "tab-1", {**origin, "callId": "asks"}):
            listener = round_listener.get()
            assert listener is not None
            listener(REQUEST, {"inputRequests": {"k": {}}, "requestState": "s"})
            assert (await rows())["asks"]["sealed_round"] is not None
            listener(REQUEST, None)  # answered
            assert (await rows())["asks"]["sealed_round"] is None
            with journal.question("ada", "tab-1", "asks"):
                assert (await rows())["asks"]["question"] is True
            assert (await rows())["asks"]["question"] is False
            listener(REQUEST, {"inputRequests": {"k": {}}, "requestState": "s2"})
            with journal.running("ada", "tab-1", {**origin, "callId": "runs"}):
                assert set(await rows()) == {"asks", "runs"}
                journal.stopping = True  # the replica stops: its calls are cancelled, their blocks exit
        assert set(await rows()) == {"asks"}  # the one waiting on a person stays for the next replica
        await journal.close()
        assert (await store.orphans("ada", "other", 1e12, 10.0)).calls[0].call_id == "asks"
        tg.cancel_scope.cancel()


def test_a_batch_is_folded_to_one_write_per_row() -> None:
    from webhost.journal import _coalesced

    batch = [
        Write("insert", "quick", {"call_id": "q"}),
        Write("update", "quick", {"sealed_round": b"r"}),
        Write("delete", "quick", {}),  # started, asked and ended within the batch: nothing at all
        Write("insert", "asks", {"call_id": "a", "question": False}),
        Write("update", "asks", {"question": True}),  # folded into its insert
        Write("update", "old", {"sealed_round": b"1"}),
        Write("update", "old", {"sealed_round": None, "round_at": None}),  # the later values win
        Write("update", "gone", {"question": True}),
        Write("delete", "gone", {}),  # only the delete of a row written before
    ]
    assert _coalesced(batch) == [
        Write("insert", "asks", {"call_id": "a", "question": True}),
        Write("update", "old", {"sealed_round": None, "round_at": None}),
        Write("delete", "gone", {}),
    ]


async def test_a_call_or_a_round_answered_within_the_settle_time_costs_no_write(store: LiveCallStore) -> None:
    batches: list[list[Write]] = []
    apply = store.apply

    async def counted(writes: Any) -> None:
        batches.append(list(writes))
        await apply(writes)

    store.apply = counted  # type: ignore[method-assign]
    journal = CallJournal(store, replica_id="me", settle=0.3)
    async with anyio.create_task_group() as tg:
        await journal.start(tg)
        origin = {"method": "tools/call", "name": "t", "server": "s", "callId": "c"}
        for _ in range(20):
            with journal.running("ada", "tab-1", origin):
                listener = round_listener.get()
                assert listener is not None
                listener(REQUEST, {"inputRequests": {"k": {}}, "requestState": "s"})
                listener(REQUEST, None)
        await journal._idle.wait()  # the writer woke after the settle time and wrote what it found
        assert batches == []
        with journal.running("ada", "tab-1", {**origin, "callId": "long"}):
            await journal.flush()  # a flush writes at once what is queued
            assert [w.kind for b in batches for w in b] == ["insert"]
        tg.cancel_scope.cancel()


async def test_a_round_asked_within_the_settle_time_still_stays_for_the_next_replica_at_a_clean_stop(
    store: LiveCallStore,
) -> None:
    journal = CallJournal(store, replica_id="me", settle=30.0)  # nothing is written before the stop
    async with anyio.create_task_group() as tg:
        await journal.start(tg)
        origin = {"method": "tools/call", "name": "t", "server": "s", "callId": "asks"}
        with journal.running("ada", "tab-1", origin):
            listener = round_listener.get()
            assert listener is not None
            listener(REQUEST, {"inputRequests": {"k": {}}, "requestState": "s"})
            journal.stopping = True  # the replica stops: its calls are cancelled, their blocks exit
        await journal.close()
        left = (await store.orphans("ada", "other", 1e12, 10.0)).calls
        assert [c.call_id for c in left] == ["asks"] and left[0].round is not None
        tg.cancel_scope.cancel()
