"""Text from outside (a call id a page chose, a tool name a server chose) is stored on both engines:
PostgreSQL refuses NUL and over-long varchars, neither driver encodes a lone surrogate, and one such
value must not fail the batch it is written with (everyone's history rows, every live call of a replica)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from webhost.apps.origins import derive_key
from webhost.storage.db import Storage
from webhost.storage.history import CallHistory, Finished
from webhost.storage.live_calls import LiveCallStore, RoundSeal, Write
from webhost.storage.portable import fit

pytestmark = pytest.mark.anyio

ODD = "n\x00ul \ud800lone \U0001f600"
STORED = "n\ufffdul \ufffdlone \U0001f600"


@pytest.fixture
async def storage(database_url: str) -> AsyncIterator[Storage]:
    storage = Storage(database_url)
    await storage.start()
    try:
        yield storage
    finally:
        await storage.close()


def test_fit_replaces_nul_and_lone_surrogates_keeps_pairs_and_cuts() -> None:
    assert fit(ODD) == STORED
    assert fit("\ud83d\ude00 and \udfff") == "\U0001f600 and \ufffd"  # a pair as two code points is one character
    assert fit("x" * 300, 200) == "x" * 200
    assert fit("plain", 3) == "pla"


def finished(name: str, call_id: str, tab: str) -> Finished:
    return Finished(
        person_id="ada",
        kind="tool",
        server="demo",
        name=name,
        arguments={"q": ODD},
        outcome={"content": [{"type": "text", "text": ODD}]},
        status="ok",
        started_at=1_790_000_000.25,
        duration_ms=1.5,
        tab=tab,
        call_id=call_id,
    )


async def test_a_history_batch_with_odd_text_is_stored_whole(storage: Storage) -> None:
    history = CallHistory(storage)
    async with anyio.create_task_group() as tg:
        tg.start_soon(history.run)
        await history.record(finished("plain", "c-1", "tab-1"))
        await history.record(finished(ODD, ODD, ODD))
        await history.record(finished("long", "c" * 500, "t" * 100))
        await history.stop()
        tg.cancel_scope.cancel()
    entries = await history.list("ada")
    assert [(e["name"], e["callId"], e["tab"]) for e in entries] == [
        ("long", "c" * 200, "t" * 64),
        (STORED, STORED, STORED),
        ("plain", "c-1", "tab-1"),
    ]
    odd = await history.get("ada", entries[1]["id"])
    assert odd is not None and odd["arguments"] == {"q": ODD}  # JSON text keeps what it was sent, escaped
    assert odd["result"]["content"][0]["text"] == ODD and odd["startedAt"] == 1_790_000_000.25


async def test_live_calls_with_odd_text_are_written_with_the_others(storage: Storage) -> None:
    store = LiveCallStore(storage, RoundSeal(derive_key(b"s" * 40, "live-calls/v1")))
    row = {"replica_id": "gone", "person_id": "ada", "server": "demo", "method": "tools/call", "started_at": 1.0}
    await store.apply(
        [
            Write("insert", "a", {**row, "name": "plain", "call_id": "c-1", "tab_id": "tab-1", "question": False}),
            Write("insert", "b", {**row, "name": ODD, "call_id": "c" * 300, "tab_id": ODD, "question": False}),
        ]
    )
    calls = {c.id: c for c in (await store.orphans("ada", "me", 1e12, 10.0)).calls}
    assert (calls["a"].name, calls["a"].call_id) == ("plain", "c-1")
    assert (calls["b"].name, calls["b"].call_id) == (STORED, "c" * 200)
